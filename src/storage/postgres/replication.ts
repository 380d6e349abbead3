// The read-access secondary's replication status, as Get Service Stats reports it
// (https://learn.microsoft.com/rest/api/storageservices/get-table-service-stats): Status, and
// LastSyncTime, before which every primary write is readable on the secondary.
//
// How LastSyncTime is known exactly: once a second the watch reads the clock and then the
// primary's current WAL position P. A write acknowledged before that instant has its commit record
// before P. So once the standby has replayed up to P, every write acknowledged before the instant
// is readable there; LastSyncTime is the latest such instant. This holds for a synchronous or an
// asynchronous standby, and for any number of Cerulean processes writing (the WAL is the
// database's, not the process's).
import assert from 'node:assert/strict';
import type { ReplicationStatus } from '../replication.js';
import type { WalPosition } from './postgres-store.js';

/** How often the primary's position is sampled: LastSyncTime trails the truth by about this. */
const sampleIntervalMs = 1_000;
/** Samples kept at most while the standby lags: older ones are dropped first (LastSyncTime only grows). */
const samplesMax = 600;

export interface WalSource {
  walPosition(): Promise<WalPosition>;
}

interface Sample {
  readonly atMs: number;
  readonly lsn: bigint;
}

export class ReplicationWatch {
  private readonly samples: Sample[] = [];
  private lastSyncMs: number | undefined;
  private secondaryState: 'unknown' | 'unreachable' | 'streaming' | 'not streaming' = 'unknown';
  private lagBytesNow: bigint | undefined;
  private readonly timer: NodeJS.Timeout;
  private ticking: Promise<void> | undefined;

  constructor(
    private readonly primary: WalSource,
    private readonly secondary: WalSource,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => {
      this.ticking ??= this.tick().finally(() => (this.ticking = undefined));
    }, sampleIntervalMs);
    this.timer.unref();
  }

  /** One sample of the primary, one look at the standby. Public for tests. */
  async tick(): Promise<void> {
    const atMs = this.now();
    const primary = await this.primary.walPosition().catch(() => undefined);
    if (primary !== undefined && !primary.inRecovery && primary.lsn !== undefined)
      this.remember({ atMs, lsn: primary.lsn });
    const secondary = await this.secondary.walPosition().catch(() => undefined);
    if (secondary === undefined || secondary.lsn === undefined || !secondary.inRecovery) {
      this.secondaryState = 'unreachable';
      return;
    }
    this.secondaryState = secondary.streaming ? 'streaming' : 'not streaming';
    this.confirm(secondary.lsn);
    const latest = this.samples.at(-1);
    if (primary?.lsn !== undefined) this.lagBytesNow = primary.lsn > secondary.lsn ? primary.lsn - secondary.lsn : 0n;
    else if (latest === undefined) this.lagBytesNow = undefined;
  }

  private remember(sample: Sample): void {
    this.samples.push(sample);
    if (this.samples.length > samplesMax) this.samples.shift();
  }

  /** Every sample at or below the standby's replayed position is confirmed; the latest one counts. */
  private confirm(replayedLsn: bigint): void {
    let confirmed: Sample | undefined;
    while (this.samples.length > 0 && this.samples[0]!.lsn <= replayedLsn) confirmed = this.samples.shift();
    if (confirmed === undefined) return;
    assert(this.lastSyncMs === undefined || confirmed.atMs >= this.lastSyncMs, 'LastSyncTime never goes back');
    this.lastSyncMs = confirmed.atMs;
  }

  status(): ReplicationStatus {
    const lastSyncTime = this.lastSyncMs === undefined ? undefined : new Date(this.lastSyncMs);
    if (this.secondaryState === 'unreachable' || this.secondaryState === 'not streaming') {
      return { status: 'unavailable', lastSyncTime, lagBytes: this.lagBytesNow };
    }
    return { status: lastSyncTime === undefined ? 'bootstrap' : 'live', lastSyncTime, lagBytes: this.lagBytesNow };
  }

  close(): void {
    clearInterval(this.timer);
  }
}
