// The PostgreSQL of the PostgreSQL contenders: the cluster CERULEAN_BENCH_DATABASE_URL names, or a
// throwaway one started from Debian's server binaries (as `npm test` does), with a fresh database
// per contender. Without either, those contenders are left out with the reason.
import pg from 'pg';
import type * as PgCluster from '../scripts/pg-cluster.mjs';

// From dist/bench/ at run time: the module lives in the repository, not in dist/ (as for `npm test`).
const pgClusterUrl = new URL('../../scripts/pg-cluster.mjs', import.meta.url);
const { postgresBin, startCluster } = (await import(pgClusterUrl.href)) as typeof PgCluster;

export interface BenchPostgres {
  /** A fresh, empty database for `name`; its URL. */
  database(name: string): Promise<string>;
  /** The URL of the database `database(name)` made, as it is (a kept cluster's, measured again). */
  existing(name: string): string;
  stop(): void;
}

export async function benchPostgres(): Promise<BenchPostgres> {
  let cluster: PgCluster.Cluster | undefined;
  let adminUrl = process.env['CERULEAN_BENCH_DATABASE_URL'];
  if (adminUrl === undefined) {
    const bin = postgresBin();
    if (bin === undefined)
      throw new Error('no CERULEAN_BENCH_DATABASE_URL and no PostgreSQL server binaries (/usr/lib/postgresql/*/bin)');
    cluster = await startCluster(bin);
    adminUrl = cluster.url;
  }
  const admin = adminUrl;
  const databaseOf = (name: string) => `cerulean_bench_${name.replace(/\W/g, '_')}`;
  const urlOf = (database: string) => {
    const url = new URL(admin);
    url.pathname = `/${database}`;
    return url.href;
  };
  return {
    async database(name) {
      const database = databaseOf(name);
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await client.query(`CREATE DATABASE ${database}`);
      } finally {
        await client.end();
      }
      return urlOf(database);
    },
    existing: (name) => urlOf(databaseOf(name)),
    stop: () => cluster?.destroy(),
  };
}
