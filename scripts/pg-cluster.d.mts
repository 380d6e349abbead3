// Types of pg-cluster.mjs (see server-process.mjs why such modules are JavaScript).

export interface Cluster {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trust authentication on loopback). */
  readonly url: string;
  readonly port: number;
  /** The data directory. */
  readonly data: string;
  /** Stops the server at once (no shutdown checkpoint: as after a crash). */
  stop(): void;
  start(): void;
  /** Stops the server and removes its files. */
  destroy(): void;
}

export interface ClusterOptions {
  /** A hot standby of this primary (its URL), copied with pg_basebackup, instead of a new cluster. */
  readonly standbyOf?: string;
  /** More `-c name=value` server settings. */
  readonly settings?: readonly string[];
}

/** Promotes the standby at `data` to a primary; resolves once it accepts writes. */
export declare function promote(bin: string, data: string): Promise<void>;
/** The newest Debian PostgreSQL's bin directory, if the server is installed. */
export declare function postgresBin(): string | undefined;
/** A free loopback port below the ephemeral range (one inside it may be held by a client socket). */
export declare function freePort(): Promise<number>;
/** A new cluster (or a hot standby of clusterOptions.standbyOf), started and accepting connections. */
export declare function startCluster(bin: string, clusterOptions?: ClusterOptions): Promise<Cluster>;
