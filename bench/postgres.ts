// The PostgreSQL of the PostgreSQL contenders: the cluster CERULEAN_BENCH_DATABASE_URL names, or a
// throwaway one started from Debian's server binaries (as `npm test` does), with a fresh database
// per contender. Without either, those contenders are left out with the reason.
import pg from 'pg';
import { postgresBin, startCluster, type Cluster } from '../tests/helpers/pg-cluster.js';

export interface BenchPostgres {
  /** A fresh, empty database for `name`; its URL. */
  database(name: string): Promise<string>;
  stop(): void;
}

export async function benchPostgres(): Promise<BenchPostgres> {
  let cluster: Cluster | undefined;
  let adminUrl = process.env['CERULEAN_BENCH_DATABASE_URL'];
  if (adminUrl === undefined) {
    const bin = postgresBin();
    if (bin === undefined)
      throw new Error('no CERULEAN_BENCH_DATABASE_URL and no PostgreSQL server binaries (/usr/lib/postgresql/*/bin)');
    cluster = await startCluster(bin);
    adminUrl = cluster.url;
  }
  const admin = adminUrl;
  return {
    async database(name) {
      const database = `cerulean_bench_${name.replace(/\W/g, '_')}`;
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await client.query(`CREATE DATABASE ${database}`);
      } finally {
        await client.end();
      }
      const url = new URL(admin);
      url.pathname = `/${database}`;
      return url.href;
    },
    stop: () => cluster?.destroy(),
  };
}
