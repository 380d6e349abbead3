// A Cerulean over a primary PostgreSQL cluster with a hot standby of it serving the read-access
// secondary endpoint (--secondary-database): what the secondary tests start.
import { startCluster, type Cluster } from './pg-cluster.js';
import { startServer, type RunningServer } from './server.js';

export interface StandbyServer {
  readonly primary: Cluster;
  readonly standby: Cluster;
  readonly server: RunningServer;
  /** Stops the server, then removes both clusters. */
  stop(): Promise<void>;
}

export async function startStandbyServer(bin: string): Promise<StandbyServer> {
  const primary = await startCluster(bin);
  const standby = await startCluster(bin, { standbyOf: primary.url });
  const server = await startServer({
    database: primary.url,
    args: ['--secondary-database', standby.url, '--log-level', 'warn'],
  });
  return {
    primary,
    standby,
    server,
    stop: async () => {
      await server.stop();
      primary.destroy();
      standby.destroy();
    },
  };
}
