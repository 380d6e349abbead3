// Composition of src/observe: from the flags, the metrics registry, the workload watch, the
// throttle and the fault plan, and the interceptors (http/interceptors.ts) through which they take
// part: around each operation the front door runs (operation-interceptors.ts), around the stores'
// entity and message methods (observed-store.ts) and around the Table service's queries
// (observed-queries.ts). The engine's onCommit and the front door's `answered` only report.
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { Account } from '../http/accounts.js';
import type { RequestTarget } from '../http/account-target.js';
import type { RequestHooks } from '../http/hooks.js';
import type { OperationInterceptor } from '../http/interceptors.js';
import type { Logger } from '../http/log.js';
import type { OperationName } from '../http/service-definition.js';
import type { Clock } from '../domain/clock.js';
import type { ServiceStores } from '../storage/engine.js';
import type { QueueStore } from '../storage/queue-store.js';
import type { ReplicationSource } from '../storage/replication.js';
import type { CommitStats, TableStore } from '../storage/table-store.js';
import type { TableServices } from '../table/service/services.js';
import type { ObserveConfig } from './config.js';
import { BlobWatch } from './blob-watch.js';
import { answerAdmin } from './admin.js';
import { FaultPlan, parseFaultDocument } from './faults.js';
import { insights, type InsightsReport } from './insights.js';
import { Metrics, type PartitionSample } from './metrics.js';
import { observedQueries } from './observed-queries.js';
import { throttledQueueStore, watchedTableStore } from './observed-store.js';
import { blobTraffic, injectedFaults, toolTraffic, uploadedBytes } from './operation-interceptors.js';
import type { QueueDepths } from './queue-metrics.js';
import { azureTargets, Throttle } from './throttle.js';
import { Workload } from './workload.js';

/** Partition series per table with --metrics-partitions. */
export const partitionSeriesPerTable = 5;
/** Queues the queue insights look at: the deepest, so a huge account costs one bounded query. */
const insightQueuesMax = 100;

export class Observation {
  readonly metrics: Metrics | undefined;
  readonly workload: Workload | undefined;
  /** The blob side of the workload watch: on with it. */
  readonly blobs: BlobWatch | undefined;
  readonly throttle: Throttle | undefined;
  readonly faults: FaultPlan;
  private engine: TableStore | undefined;
  /** The table store the primary's services use (stores()). */
  private watchedTables: TableStore | undefined;
  /** The queue engine (unthrottled: a scrape is no client traffic) and the queue service's clock. */
  private queues: { readonly engine: QueueStore; readonly clock: Clock } | undefined;
  /** The read-access secondary's replication, once the composition has one. */
  replication: ReplicationSource | undefined;

  /**
   * `operations`: every operation name the server's route tables have (fault rules may name only
   * these). Throws an Error naming the problem when the faults file cannot be read or is invalid.
   */
  constructor(
    private readonly config: ObserveConfig,
    private readonly log: Logger,
    private readonly operations: readonly OperationName[],
  ) {
    this.faults = new FaultPlan(
      config.faultsFile === undefined ? undefined : readFaultsFile(config.faultsFile, operations),
    );
    this.workload = config.metrics ? new Workload() : undefined;
    this.blobs = config.metrics ? new BlobWatch() : undefined;
    this.metrics = config.metrics
      ? new Metrics({
          diskUsage: async () => this.engine?.sizeOnDisk?.(),
          partitions: config.metricsPartitions ? () => this.busiestPartitions() : undefined,
          insightCounts: async () => (await this.insights())!.counts,
          replication: () => this.replication?.status(),
          lastFailoverMs: () => this.engine?.lastFailoverMs?.(),
          queueDepths: (limit) => this.queueDepths(limit),
        })
      : undefined;
    this.throttle = config.throttle && new Throttle(config.throttle, (scope) => this.metrics?.throttled(scope));
  }

  /** For the engine's options: hears of each durable commit. */
  readonly onCommit = (stats: CommitStats): void => this.metrics?.committed(stats);

  /**
   * The stores the primary's services use: the table store watched and throttled when either is on,
   * the queue store throttled when the throttle is on, the blob store as it is (its traffic is
   * intercepted around each blob operation instead: operation-interceptors.ts).
   */
  stores(engine: ServiceStores, clock: Clock): ServiceStores {
    this.engine = engine.tables;
    this.queues = { engine: engine.queues, clock };
    const watched = this.workload !== undefined || this.throttle !== undefined;
    this.watchedTables = watched ? watchedTableStore(engine.tables, this) : engine.tables;
    const queues = this.throttle === undefined ? engine.queues : throttledQueueStore(engine.queues, this.throttle);
    return { tables: this.watchedTables, queues, blobs: engine.blobs, paths: engine.paths };
  }

  /** The Table service's operations with its queries watched and throttled when either is on. */
  tableServices(services: TableServices): TableServices {
    if (this.workload === undefined && this.throttle === undefined) return services;
    return { ...services, queries: observedQueries(services.queries, this) };
  }

  async insights(): Promise<InsightsReport | undefined> {
    if (this.workload === undefined) return undefined;
    const partitionPerSecond = this.throttle?.rates.partitionPerSecond ?? azureTargets.partitionPerSecond;
    // The store unreachable: the table findings still answer.
    const queues = await this.queueDepths(insightQueuesMax).catch(() => undefined);
    const containers = this.blobs?.watched() ?? [];
    return insights(this.workload, { splitEntitiesPerSecond: partitionPerSecond / 2 }, queues, containers);
  }

  hooks(accounts: ReadonlyMap<string, Account>): RequestHooks {
    return {
      admin: (request: IncomingMessage, target: RequestTarget) =>
        answerAdmin(request, target, {
          accounts,
          metricsPublic: this.config.metricsPublic,
          metrics: this.metrics && (() => this.metrics!.scrape()),
          insights: this.workload && {
            report: async () => (await this.insights())!,
            reset: () => {
              this.workload!.reset();
              this.blobs?.reset();
            },
          },
          faults: {
            describe: () => this.faults.describe(),
            replace: (text) => {
              this.faults.replace(parseFaultDocument(text, this.operations));
              this.log.info(`fault rules replaced: ${JSON.stringify(this.faults.describe())}`);
            },
            clear: () => {
              this.faults.replace({ seed: 1, rules: [] });
              this.log.info('fault rules cleared');
            },
          },
        }),
      operations: this.operationInterceptors(),
      answered: (operation, status, durationMs) => this.metrics?.request(operation, status, durationMs),
    };
  }

  /** Around each operation, outermost first (operation-interceptors.ts). */
  private operationInterceptors(): OperationInterceptor[] {
    const interceptors = [toolTraffic, injectedFaults(this.faults, this.metrics, this.log), blobTraffic(this)];
    return this.metrics === undefined ? interceptors : [...interceptors, uploadedBytes(this.metrics)];
  }

  private async queueDepths(limit: number): Promise<QueueDepths> {
    if (this.queues === undefined) return { nowMs: Date.now(), depths: [] };
    const nowMs = this.queues.clock.nowMs();
    return { nowMs, depths: await this.queues.engine.deepestQueues(nowMs, limit) };
  }

  private busiestPartitions(): PartitionSample[] {
    return (this.workload?.watched() ?? []).flatMap(({ account, table, partitions }) =>
      partitions
        .top(partitionSeriesPerTable)
        .map((entry) => ({ account, table, partitionKey: entry.key, entities: entry.count })),
    );
  }
}

function readFaultsFile(file: string, operations: readonly OperationName[]) {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`--faults: cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return parseFaultDocument(text, operations);
  } catch (error) {
    throw new Error(`--faults ${file}: ${(error as Error).message}`);
  }
}
