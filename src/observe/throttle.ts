// Throttling emulation (`--throttle`): the service's scalability targets as token buckets, one per
// account and one per partition (or per blob: the Blob service's target is per blob), refilled at
// the target rate and holding one second of it (the burst). A request is admitted when both
// buckets hold its cost (at most one full bucket: a batch larger than a bucket passes from a full
// one); its entities are then taken, so the buckets may go into debt and refuse what follows until
// the rate has paid it back. Refused requests get what the
// service answers: 503 ServerBusy, and are not executed.
import { causedBy, StorageError } from '../errors.js';
import { partitionBucketsMax } from '../limits.js';

export interface ThrottleRates {
  /** Entities per second per partition (Azure: 2,000). */
  readonly partitionPerSecond: number;
  /** Entities (or requests) per second per account (Azure: 20,000). */
  readonly accountPerSecond: number;
  /** Requests per second per blob (Azure: 500). */
  readonly blobPerSecond: number;
}

/**
 * Scalability targets for a storage account's Table service (1 KiB entities), and a single blob's
 * request rate (https://learn.microsoft.com/azure/storage/blobs/scalability-targets).
 */
export const azureTargets: ThrottleRates = { partitionPerSecond: 2_000, accountPerSecond: 20_000, blobPerSecond: 500 };

export type ThrottleScope = 'partition' | 'account' | 'blob';

const rateFields = { partition: 'partitionPerSecond', account: 'accountPerSecond', blob: 'blobPerSecond' } as const;

/** `azure` or `partition=N,account=M,blob=K` (any may be left out: it then keeps the Azure target). */
export function parseThrottle(text: string): ThrottleRates {
  if (text === 'azure') return azureTargets;
  const rates: { -readonly [K in keyof ThrottleRates]: number } = { ...azureTargets };
  for (const part of text.split(',')) {
    const match = /^(partition|account|blob)=([1-9]\d{0,8})$/.exec(part.trim());
    if (match === null) {
      throw new Error(`--throttle must be 'azure' or 'partition=N,account=M,blob=K', not '${text}'`);
    }
    rates[rateFields[match[1] as ThrottleScope]] = Number(match[2]);
  }
  return rates;
}

/** The throttle's table name for blobs: \u0001 is in no table name, so no table shares a bucket. */
const blobScope = '\u0001blob';

class TokenBucket {
  private tokens: number;
  private refilledAtMs: number;

  constructor(
    readonly perSecond: number,
    nowMs: number,
  ) {
    this.tokens = perSecond;
    this.refilledAtMs = nowMs;
  }

  /** Tokens now (refilled up to one second of rate). */
  level(nowMs: number): number {
    const elapsedMs = Math.max(0, nowMs - this.refilledAtMs);
    this.tokens = Math.min(this.perSecond, this.tokens + (elapsedMs * this.perSecond) / 1000);
    this.refilledAtMs = nowMs;
    return this.tokens;
  }

  holds(cost: number, nowMs: number): boolean {
    return this.level(nowMs) >= Math.min(cost, this.perSecond);
  }

  take(cost: number): void {
    this.tokens -= cost;
  }

  full(nowMs: number): boolean {
    return this.level(nowMs) >= this.perSecond;
  }
}

export class Throttle {
  private readonly accounts = new Map<string, TokenBucket>();
  /** Insertion order = least recently used first (a use re-inserts). */
  private readonly partitions = new Map<string, TokenBucket>();

  constructor(
    readonly rates: ThrottleRates,
    private readonly onRefused: (scope: ThrottleScope) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Admits `cost` entities for the partition (undefined: a query over several partitions, checked
   * against the account alone) or throws 503 ServerBusy without taking anything.
   */
  admit(account: string, table: string, partitionKey: string | undefined, cost: number): void {
    this.admitTo(account, table, partitionKey, cost, 'partition');
  }

  /**
   * Admits one request for a blob (`container/name`) against the blob's target and the account's
   * (the account's bucket is the one tables and queues take from), or throws 503 ServerBusy.
   */
  admitBlob(account: string, blob: string): void {
    this.admitTo(account, blobScope, blob, 1, 'blob');
  }

  private admitTo(account: string, table: string, key: string | undefined, cost: number, scope: ThrottleScope): void {
    const nowMs = this.now();
    const accountBucket = this.accountBucket(account, nowMs);
    const keyBucket = key === undefined ? undefined : this.partitionBucket(account, table, key, nowMs, scope);
    if (keyBucket !== undefined && !keyBucket.holds(cost, nowMs)) throw this.refuse(scope);
    if (!accountBucket.holds(cost, nowMs)) throw this.refuse('account');
    accountBucket.take(cost);
    keyBucket?.take(cost);
  }

  /** Entities a request turned out to cost after it ran (a query's results): taken, never refused. */
  charge(account: string, table: string, partitionKey: string | undefined, cost: number): void {
    if (cost <= 0) return;
    const nowMs = this.now();
    this.accountBucket(account, nowMs).take(cost);
    if (partitionKey !== undefined) this.partitionBucket(account, table, partitionKey, nowMs).take(cost);
  }

  private accountBucket(account: string, nowMs: number): TokenBucket {
    let bucket = this.accounts.get(account);
    if (bucket === undefined) {
      bucket = new TokenBucket(this.rates.accountPerSecond, nowMs);
      this.accounts.set(account, bucket);
    }
    return bucket;
  }

  /** A partition's bucket, or a blob's (`scope` 'blob', under the blob scope's table name). */
  private partitionBucket(
    account: string,
    table: string,
    partitionKey: string,
    nowMs: number,
    scope: ThrottleScope = 'partition',
  ): TokenBucket {
    // `table` is the stored name (TableInfo.name), one spelling per table; \u0000 is in no name.
    const key = `${account}\u0000${table}\u0000${partitionKey}`;
    let bucket = this.partitions.get(key);
    if (bucket !== undefined) {
      this.partitions.delete(key);
    } else {
      if (this.partitions.size >= partitionBucketsMax) this.evict(nowMs);
      bucket = new TokenBucket(scope === 'blob' ? this.rates.blobPerSecond : this.rates.partitionPerSecond, nowMs);
    }
    this.partitions.set(key, bucket);
    return bucket;
  }

  /** Drops full buckets (a new one would be the same), or else the least recently used quarter. */
  private evict(nowMs: number): void {
    for (const [key, bucket] of this.partitions) if (bucket.full(nowMs)) this.partitions.delete(key);
    if (this.partitions.size < partitionBucketsMax) return;
    let drop = partitionBucketsMax / 4;
    for (const key of this.partitions.keys()) {
      if (drop-- <= 0) break;
      this.partitions.delete(key);
    }
  }

  private refuse(scope: ThrottleScope): StorageError {
    this.onRefused(scope);
    // A blob over its target gets the partition's text: a blob is its own partition in the Blob service.
    const error = new StorageError('ServerBusy', scope === 'account' ? accountLimitMessage : partitionLimitMessage);
    return causedBy(error, `throttled (--throttle): the ${scope}'s rate target is used up`);
  }
}

// The service's texts (Common REST API error codes): one for a partition over its target, one for
// the account over its operations per second.
const partitionLimitMessage = 'The server is currently unable to receive requests. Please retry your request.';
const accountLimitMessage = 'Operations per second is over the account limit.';
