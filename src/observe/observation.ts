// Composition of src/observe: from the flags, the metrics registry, the workload watch, the
// throttle and the fault plan, and the three places they attach: the store (ObservedStore, plus
// the engine's onCommit), the query service (ObservedQueryService) and the server (RequestHooks).
import type { ReplicationSource } from '../storage/replication.js';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Account } from '../http/accounts.js';
import type { RequestTarget } from '../http/account-target.js';
import { InjectedFault, type RequestHooks, type RunTarget } from '../http/hooks.js';
import type { Logger } from '../http/log.js';
import type { Reply } from '../http/respond.js';
import type { OperationName, ServiceDefinition } from '../http/service-definition.js';
import { StorageError } from '../errors.js';
import type { TableServices } from '../table/service/services.js';
import type { ServiceStores } from '../storage/engine.js';
import type { CommitStats, TableStore } from '../storage/table-store.js';
import type { ObserveConfig } from './config.js';
import { countedChunks, countedReply } from './blob-traffic.js';
import { BlobWatch } from './blob-watch.js';
import { answerAdmin } from './admin.js';
import { FaultPlan, parseFaultDocument } from './faults.js';
import { insights, type InsightsReport } from './insights.js';
import { Metrics, type PartitionSample } from './metrics.js';
import { ObservedQueryService } from './observed-queries.js';
import { ObservedStore } from './observed-store.js';
import { azureTargets, Throttle } from './throttle.js';
import { runAsToolWhen } from './tool-traffic.js';
import { ThrottledQueueStore } from './throttled-queue-store.js';
import type { QueueStore } from '../storage/queue-store.js';
import type { Clock } from '../domain/clock.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { QueueDepths } from './queue-metrics.js';
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
   * watched at the front door's hooks).
   */
  stores(engine: ServiceStores, clock: Clock): ServiceStores {
    this.engine = engine.tables;
    this.queues = { engine: engine.queues, clock };
    const watched = this.workload !== undefined || this.throttle !== undefined;
    this.watchedTables = watched ? new ObservedStore(engine.tables, this) : engine.tables;
    const queues = this.throttle === undefined ? engine.queues : new ThrottledQueueStore(engine.queues, this.throttle);
    return { tables: this.watchedTables, queues, blobs: engine.blobs };
  }

  /** A service's operations as the watch sees them: the Table service's queries observed, the rest as they are. */
  services<S>(name: ServiceDefinition<{ readonly kind: string }, S>['name'], services: S): S {
    const tables = this.watchedTables;
    if (name !== 'table' || tables === undefined) return services;
    if (this.workload === undefined && this.throttle === undefined) return services;
    return { ...(services as TableServices), queries: new ObservedQueryService(tables, this) } as S;
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
      // Without fault rules nothing stands between the request and its operation.
      run: (operation, table, execute, headers, target) => {
        const blobExecute = this.blobExecute(operation, execute, headers, target);
        return runAsToolWhen(headers, () =>
          this.faults.empty ? blobExecute() : this.run(operation, table, blobExecute),
        );
      },
      answered: (operation, status, durationMs) => this.metrics?.request(operation, status, durationMs),
      watchBody: (operation, chunks) =>
        this.metrics === undefined
          ? chunks
          : countedChunks(chunks, (bytes) => this.metrics!.blobBytesMoved('uploaded', operation, bytes)),
    };
  }

  /**
   * A blob request's operation as observation sees it: admitted by the throttle against its blob's
   * target (after any fault: a fault's request is not executed), its download counted and its
   * answer told to the blob watch. Other requests' `execute` as it is.
   */
  private blobExecute(
    operation: OperationName,
    execute: () => Promise<Reply>,
    headers: IncomingHttpHeaders,
    target: RunTarget | undefined,
  ): () => Promise<Reply> {
    const object = target?.object;
    if (object === undefined) return execute;
    return async () => {
      this.throttle?.admitBlob(target!.account, object);
      let reply: Reply;
      try {
        reply = await execute();
      } catch (error) {
        if (error instanceof StorageError) this.blobs?.refused(target!.account, object, error.code);
        throw error;
      }
      if (this.metrics !== undefined && operation === 'GetBlob') {
        reply = countedReply(reply, (bytes) => this.metrics!.blobBytesMoved('downloaded', operation, bytes));
      }
      const length = reply.headers?.['Content-Length'];
      this.blobs?.answered({
        operation,
        account: target!.account,
        object,
        headers,
        status: reply.status,
        replyBytes: length === undefined ? undefined : Number(length),
      });
      return reply;
    };
  }

  /** Applies the fault (if any) the rules pick for this request. */
  private async run(
    operation: OperationName,
    scope: () => string | undefined,
    execute: () => Promise<Reply>,
  ): Promise<Reply | 'drop'> {
    let known: { table: string | undefined } | undefined;
    const table = (): string | undefined => (known ??= { table: scope() }).table;
    const fault = this.faults.pick(operation, table);
    if (fault === undefined) return execute();
    this.metrics?.faultInjected(fault.kind, operation);
    const latency = fault.kind === 'latency' ? ` ${fault.latencyMs} ms` : '';
    const where = table() === undefined ? '' : ` ${table()}`;
    // One line per fault: the front door does not log the failure again (InjectedFault).
    const line = `fault injected: ${fault.kind}${latency} on ${operation}${where} (rule ${fault.rule})`;
    if (fault.kind === 'latency') this.log.info(line);
    else this.log.warn(line);
    switch (fault.kind) {
      case 'latency':
        await sleep(fault.latencyMs);
        return execute();
      case 'connectionReset':
        return 'drop';
      case 'answerLost':
        // The operation runs to the end (a write is durable), then the answer is lost.
        await execute().catch(() => undefined);
        return 'drop';
      default:
        throw new InjectedFault(fault.kind);
    }
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
