// Throttling emulation (`--throttle`): the service's scalability targets as token buckets, one per
// account and one per partition, refilled at the target rate and holding one second of it (the
// burst). A request is admitted when both buckets hold its cost (at most one full bucket: a batch
// larger than a bucket passes from a full one); its entities are then taken, so the buckets may go
// into debt and refuse what follows until the rate has paid it back. Refused requests get what the
// service answers: 503 ServerBusy, and are not executed.
import { causedBy, TableError } from '../errors.js';
import { partitionBucketsMax } from '../limits.js';

export interface ThrottleRates {
  /** Entities per second per partition (Azure: 2,000). */
  readonly partitionPerSecond: number;
  /** Entities per second per account (Azure: 20,000). */
  readonly accountPerSecond: number;
}

/** Scalability targets for a storage account's Table service (1 KiB entities). */
export const azureTargets: ThrottleRates = { partitionPerSecond: 2_000, accountPerSecond: 20_000 };

export type ThrottleScope = 'partition' | 'account';

/** `azure` or `partition=N,account=M` (either may be left out: it then keeps the Azure target). */
export function parseThrottle(text: string): ThrottleRates {
  if (text === 'azure') return azureTargets;
  let rates = { ...azureTargets };
  for (const part of text.split(',')) {
    const match = /^(partition|account)=([1-9]\d{0,8})$/.exec(part.trim());
    if (match === null) throw new Error(`--throttle must be 'azure' or 'partition=N,account=M', not '${text}'`);
    rates =
      match[1] === 'partition'
        ? { ...rates, partitionPerSecond: Number(match[2]) }
        : { ...rates, accountPerSecond: Number(match[2]) };
  }
  return rates;
}

class TokenBucket {
  private tokens: number;
  private refilledAtMs: number;

  constructor(
    private readonly perSecond: number,
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
    const nowMs = this.now();
    const accountBucket = this.accountBucket(account, nowMs);
    const partitionBucket =
      partitionKey === undefined ? undefined : this.partitionBucket(account, table, partitionKey, nowMs);
    if (partitionBucket !== undefined && !partitionBucket.holds(cost, nowMs)) throw this.refuse('partition');
    if (!accountBucket.holds(cost, nowMs)) throw this.refuse('account');
    accountBucket.take(cost);
    partitionBucket?.take(cost);
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

  private partitionBucket(account: string, table: string, partitionKey: string, nowMs: number): TokenBucket {
    // `table` is the stored name (TableInfo.name), one spelling per table; \u0000 is in no name.
    const key = `${account}\u0000${table}\u0000${partitionKey}`;
    let bucket = this.partitions.get(key);
    if (bucket !== undefined) {
      this.partitions.delete(key);
    } else {
      if (this.partitions.size >= partitionBucketsMax) this.evict(nowMs);
      bucket = new TokenBucket(this.rates.partitionPerSecond, nowMs);
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

  private refuse(scope: ThrottleScope): TableError {
    this.onRefused(scope);
    const error = new TableError('ServerBusy', scope === 'account' ? accountLimitMessage : partitionLimitMessage);
    return causedBy(error, `throttled (--throttle): the ${scope}'s rate target is used up`);
  }
}

// The service's texts (Common REST API error codes): one for a partition over its target, one for
// the account over its operations per second.
const partitionLimitMessage = 'The server is currently unable to receive requests. Please retry your request.';
const accountLimitMessage = 'Operations per second is over the account limit.';
