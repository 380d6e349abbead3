// The Prometheus registry (prom-client) and every series Cerulean exports on /_metrics. Request
// and query series are updated on the request path through cached label children; sizes on disk,
// partition series, insight counts and queue depths are read when scraped.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { ReplicationStatus } from '../storage/replication.js';
import type { CommitStats, DiskUsage } from '../storage/table-store.js';
import type { FaultKind } from './faults.js';
import type { InsightKind } from './insights.js';
import type { OperationName } from '../http/service-definition.js';
import { registerQueueGauges, type QueueDepthSource } from './queue-metrics.js';
import type { ThrottleScope } from './throttle.js';

export interface PartitionSample {
  readonly account: string;
  readonly table: string;
  readonly partitionKey: string;
  /** Entities read or written through the partition (an estimate: at least the true count). */
  readonly entities: number;
}

export interface ScrapeSources {
  /** Bytes of data and of the write-ahead log, if the store keeps files. */
  readonly diskUsage: (() => Promise<DiskUsage | undefined>) | undefined;
  /** The busiest partitions of each table; undefined unless --metrics-partitions. */
  readonly partitions: (() => PartitionSample[]) | undefined;
  readonly insightCounts: () => Promise<Readonly<Record<InsightKind, number>>>;
  /** The read-access secondary's replication, when it is a real standby (--secondary-database). */
  readonly replication: () => ReplicationStatus | undefined;
  /** When this process last saw its database fail over to another host (ms since the epoch). */
  readonly lastFailoverMs: () => number | undefined;
  /** The deepest queues and the queue clock's now (src/observe/queue-metrics.ts). */
  readonly queueDepths: QueueDepthSource;
}

const prefix = 'cerulean_';
const latencyBucketsSeconds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const groupSizeBuckets = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/** Partition series (--metrics-partitions): traffic of the busiest partitions, not their size. */
function partitionGauge(partitions: NonNullable<ScrapeSources['partitions']>, registers: Registry[]): void {
  const partitionTouched = new Gauge({
    name: `${prefix}partition_entities_touched`,
    help:
      'Traffic, not size: entities read or written through the busiest partitions of each table ' +
      'since observation began (an upper estimate).',
    labelNames: ['account', 'table', 'partition'],
    registers,
    collect() {
      partitionTouched.reset();
      for (const sample of partitions()) {
        const labels = { account: sample.account, table: sample.table, partition: sample.partitionKey };
        partitionTouched.set(labels, sample.entities);
      }
    },
  });
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new RequestSeries();
  private readonly queries: Counter<'class'>;
  private readonly entitiesRead: Counter<'class'>;
  private readonly entitiesReturned: Counter<'class'>;
  private readonly throttledRequests: Counter<'scope'>;
  private readonly commitSeconds: Histogram;
  private readonly commitGroupWrites: Histogram;
  private readonly faults: Counter<'kind' | 'operation'>;
  private readonly blobBytes: BlobByteSeries;

  constructor(sources: ScrapeSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix });
    for (const metric of this.requests.metrics()) this.registry.registerMetric(metric);
    this.queries = new Counter({
      name: `${prefix}query_pages_total`,
      help: 'Query Entities pages answered, by query class.',
      labelNames: ['class'],
      registers,
    });
    this.entitiesRead = new Counter({
      name: `${prefix}query_entities_read_total`,
      help: 'Entities read from storage by queries, matched or not, by query class (point, range, partition-scan, multi-range, table-scan).',
      labelNames: ['class'],
      registers,
    });
    this.entitiesReturned = new Counter({
      name: `${prefix}query_entities_returned_total`,
      help: 'Entities returned by queries, by query class.',
      labelNames: ['class'],
      registers,
    });
    this.throttledRequests = new Counter({
      name: `${prefix}throttled_requests_total`,
      help: 'Requests refused with 503 ServerBusy by the throttle (--throttle), by the target passed (partition or account).',
      labelNames: ['scope'],
      registers,
    });
    this.commitSeconds = new Histogram({
      name: `${prefix}commit_duration_seconds`,
      help: 'Durable commits of the storage engine: transaction plus fsync.',
      buckets: latencyBucketsSeconds,
      registers,
    });
    this.commitGroupWrites = new Histogram({
      name: `${prefix}commit_group_writes`,
      help: 'Writes (requests) sharing one durable commit (group commit).',
      buckets: groupSizeBuckets,
      registers,
    });
    this.faults = new Counter({
      name: `${prefix}faults_injected_total`,
      help: 'Faults injected (--faults, /_faults), by kind and operation.',
      labelNames: ['kind', 'operation'],
      registers,
    });
    this.blobBytes = new BlobByteSeries(registers);
    registerStoreGauges(sources, registers);
    registerReplicationGauges(sources, registers);
    if (sources.partitions !== undefined) partitionGauge(sources.partitions, registers);
    registerQueueGauges(prefix, sources.queueDepths, registers);
  }

  request(operation: OperationName, status: number | 'dropped', durationMs: number): void {
    this.requests.record(operation, status, durationMs / 1000);
  }

  queried(queryClass: string, read: number, returned: number): void {
    this.queries.inc({ class: queryClass });
    this.entitiesRead.inc({ class: queryClass }, read);
    this.entitiesReturned.inc({ class: queryClass }, returned);
  }

  throttled(scope: ThrottleScope): void {
    this.throttledRequests.inc({ scope });
  }

  committed(stats: CommitStats): void {
    this.commitSeconds.observe(stats.durationMs / 1000);
    this.commitGroupWrites.observe(stats.writes);
  }

  faultInjected(kind: FaultKind, operation: OperationName): void {
    this.faults.inc({ kind, operation });
  }

  /** Bytes of blob content received (a streamed request body, as read) or sent (a Get Blob reply). */
  blobBytesMoved(direction: 'uploaded' | 'downloaded', operation: OperationName, bytes: number): void {
    if (bytes > 0) this.blobBytes.add(direction, operation, bytes);
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}

/** Blob traffic in bytes, two counters by operation (children cached: no label hashing per request). */
class BlobByteSeries {
  private readonly counters: Record<'uploaded' | 'downloaded', Counter<'operation'>>;
  private readonly children = new Map<string, { inc(value: number): void }>();

  constructor(registers: Registry[]) {
    const counter = (direction: string, help: string): Counter<'operation'> =>
      new Counter({ name: `${prefix}blob_${direction}_bytes_total`, help, labelNames: ['operation'], registers });
    this.counters = {
      uploaded: counter(
        'uploaded',
        'Bytes of streamed blob request bodies (Put Blob, Put Block, Append Block, Put Block List) read, by operation.',
      ),
      downloaded: counter('downloaded', 'Bytes of blob content sent in Get Blob replies, by operation.'),
    };
  }

  add(direction: 'uploaded' | 'downloaded', operation: OperationName, bytes: number): void {
    const key = `${direction} ${operation}`;
    let child = this.children.get(key);
    if (child === undefined) {
      child = this.counters[direction].labels({ operation });
      this.children.set(key, child);
    }
    child.inc(bytes);
  }
}

interface OperationSeries {
  readonly statuses: Map<number | 'dropped', number>;
  /** Answers per latency bucket (not cumulative); the last one is +Inf. */
  readonly buckets: number[];
  sumSeconds: number;
  count: number;
}

/**
 * Requests by operation and status, and their latency histogram, kept in plain numbers: with
 * prom-client's own Counter and Histogram each request would hash its label values twice, a few
 * microseconds on a point read. The registry reads them at scrape time through the metric
 * interface it calls (`get()`, as its own metrics have).
 */
class RequestSeries {
  private readonly operations = new Map<OperationName, OperationSeries>();

  record(operation: OperationName, status: number | 'dropped', seconds: number): void {
    let series = this.operations.get(operation);
    if (series === undefined) {
      series = {
        statuses: new Map(),
        buckets: new Array<number>(latencyBucketsSeconds.length + 1).fill(0),
        sumSeconds: 0,
        count: 0,
      };
      this.operations.set(operation, series);
    }
    series.statuses.set(status, (series.statuses.get(status) ?? 0) + 1);
    let bucket = 0;
    while (bucket < latencyBucketsSeconds.length && seconds > latencyBucketsSeconds[bucket]!) bucket++;
    series.buckets[bucket]!++;
    series.sumSeconds += seconds;
    series.count++;
  }

  metrics(): Metric[] {
    const requests = `${prefix}requests_total`;
    const duration = `${prefix}request_duration_seconds`;
    const counter = {
      name: requests,
      help: 'Requests answered, by operation (Storage Analytics names) and HTTP status ("dropped": connection reset by a fault).',
      type: 'counter',
      aggregator: 'sum',
      get: async () => ({
        ...counter,
        values: [...this.operations].flatMap(([operation, series]) =>
          [...series.statuses].map(([status, value]) => ({ labels: { operation, status: String(status) }, value })),
        ),
      }),
    };
    const histogram = {
      name: duration,
      help: 'Time from a request arriving to its answer being written, by operation.',
      type: 'histogram',
      aggregator: 'sum',
      get: async () => ({
        ...histogram,
        values: [...this.operations].flatMap(([operation, series]) => {
          let cumulative = 0;
          const buckets = series.buckets.map((count, i) => {
            cumulative += count;
            const le = i < latencyBucketsSeconds.length ? String(latencyBucketsSeconds[i]) : '+Inf';
            return { metricName: `${duration}_bucket`, labels: { operation, le }, value: cumulative };
          });
          return [
            ...buckets,
            { metricName: `${duration}_sum`, labels: { operation }, value: series.sumSeconds },
            { metricName: `${duration}_count`, labels: { operation }, value: series.count },
          ];
        }),
      }),
    };
    return [counter, histogram] as unknown as Metric[];
  }
}

const replicationStates = ['live', 'bootstrap', 'unavailable'] as const;

/** The secondary's replication and the last failover seen, read when scraped; absent when unknown. */
function registerReplicationGauges(sources: ScrapeSources, registers: Registry[]): void {
  const lagSeconds = new Gauge({
    name: `${prefix}replication_lag_seconds`,
    help: 'How far the secondary trails the primary: now minus its LastSyncTime (--secondary-database).',
    registers,
    collect() {
      const lastSync = sources.replication()?.lastSyncTime;
      if (lastSync !== undefined) lagSeconds.set(Math.max(0, (Date.now() - lastSync.getTime()) / 1000));
    },
  });
  const lagBytes = new Gauge({
    name: `${prefix}replication_lag_bytes`,
    help: "Bytes of the primary's write-ahead log the secondary has not replayed yet.",
    registers,
    collect() {
      const bytes = sources.replication()?.lagBytes;
      if (bytes !== undefined) lagBytes.set(Number(bytes));
    },
  });
  const state = new Gauge({
    name: `${prefix}replication_status`,
    help: 'The secondary as Get Service Stats reports it: 1 for the current status.',
    labelNames: ['status'],
    registers,
    collect() {
      const status = sources.replication()?.status;
      if (status === undefined) return;
      for (const each of replicationStates) state.set({ status: each }, each === status ? 1 : 0);
    },
  });
  const failover = new Gauge({
    name: `${prefix}database_last_failover_timestamp_seconds`,
    help: 'When this process last found its database primary on another host (a failover).',
    registers,
    collect() {
      const ms = sources.lastFailoverMs();
      if (ms !== undefined) failover.set(ms / 1000);
    },
  });
}

/** Bytes on disk and the insight counts, read when scraped. */
function registerStoreGauges(sources: ScrapeSources, registers: Registry[]): void {
  const diskBytes = new Gauge({
    name: `${prefix}storage_bytes`,
    help: 'Size on disk of the store: data files and write-ahead log.',
    labelNames: ['kind'],
    registers,
    async collect() {
      const usage = await sources.diskUsage?.();
      if (usage === undefined) return;
      diskBytes.set({ kind: 'data' }, usage.dataBytes);
      diskBytes.set({ kind: 'log' }, usage.logBytes);
    },
  });
  const insightFindings = new Gauge({
    name: `${prefix}insights_findings`,
    help: 'Design insights currently reported by /_insights, by kind.',
    labelNames: ['kind'],
    registers,
    async collect() {
      for (const [kind, count] of Object.entries(await sources.insightCounts())) insightFindings.set({ kind }, count);
    },
  });
}
