// What a read-access secondary reports of its replication (Get Service Stats' GeoReplication
// element), engine-neutral: an engine with a real standby measures it (postgres/replication.ts).

export interface ReplicationStatus {
  /** live: replicating; bootstrap: not yet caught up once; unavailable: the secondary is not replicating now. */
  readonly status: 'live' | 'bootstrap' | 'unavailable';
  /** Every primary write acknowledged before this instant is readable on the secondary; undefined: none known. */
  readonly lastSyncTime: Date | undefined;
  /** How far the secondary's replay trails the primary's log (bytes), when both were reachable. */
  readonly lagBytes?: bigint | undefined;
}

export interface ReplicationSource {
  status(): ReplicationStatus;
}
