// Throwaway PostgreSQL clusters for the tests: scripts/pg-cluster.mjs, which `npm test` and the
// benchmark use too, loaded from the repository.
import type * as PgCluster from '../../scripts/pg-cluster.mjs';

// From dist/tests/helpers/ at run time: the module lives in the repository, not in dist/.
const pgClusterUrl = new URL('../../../scripts/pg-cluster.mjs', import.meta.url);
export const { freePort, postgresBin, promote, startCluster } = (await import(pgClusterUrl.href)) as typeof PgCluster;
export type { Cluster, ClusterOptions } from '../../scripts/pg-cluster.mjs';
