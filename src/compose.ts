// Composition: configuration → engine (storage/engine.ts) → every service over it, shared by the server
// (main.ts) and the tools that work on a store. Each service is one module value, its definition, which
// makes the service's operations over the engine's stores; the composition loops over them, for the
// primary and for the read-access secondary alike. Process concerns (signals, the banner, listening)
// stay with the caller.
import type { Server } from 'node:http';
import { Sweep, type SweepOptions } from './storage/sweep.js';
import type { QueueStore } from './storage/queue-store.js';
import type { CommitObserver, TableStore } from './storage/table-store.js';
import type { ReplicationSource } from './storage/replication.js';
import {
  contentGraceMsOf,
  openEngine,
  openStandbyEngine,
  type Engine,
  type EngineOptions,
  type ServiceStores,
  type StoreConfig,
} from './storage/engine.js';
import { systemClock, type Clock } from './domain/clock.js';
import type { FrontDoor } from './http/server.js';
import type { ServiceContext, ServiceDefinition, ServiceModule } from './http/service-definition.js';
import { tableService } from './table/definition.js';
import type { TableServices } from './table/service/services.js';
import { queueService } from './queue/definition.js';
import { blobService } from './blob/definition.js';
import { claimsDatalake, datalakeService } from './dfs/definition.js';
import { sharePort } from './http/shared-port.js';

export { checkDatabaseUrl, describeStore, type ReachabilityObserver, type StoreConfig } from './storage/engine.js';

/** A service module with its types bound in, so that one list holds services of different types. */
interface BoundService {
  readonly definition: ComposedService['definition'] & { readonly routes: readonly { readonly operation: string }[] };
  compose(primary: ServiceContext, secondary: ServiceContext | undefined, watch: Watch | undefined): ComposedService;
}

/** `watched`: the primary's operations as the watch intercepts them; undefined: as they are (their stores are). */
function bound<R extends { readonly kind: string }, S>(
  definition: ServiceModule<R, S>,
  watched?: (watch: Watch, services: S) => S,
): BoundService {
  return {
    definition,
    compose: (primary, secondary, watch) =>
      composeService(definition, primary, secondary, watch && watched && ((services) => watched(watch, services))),
  };
}

/** The services this build serves, each on a port of its own; the Table service first (the banner's first line). */
export const serviceDefinitions: readonly BoundService[] = [
  bound(tableService, (watch, services) => watch.tableServices(services)),
  bound(queueService),
  // The Data Lake API answers on the Blob service's port (http/shared-port.ts, docs/datalake.md).
  bound(sharePort(blobService, datalakeService, claimsDatalake, 'dfs:')),
];

/** One service's definition with its operations made over the primary's stores, and the secondary's. */
export interface ComposedService {
  readonly definition: Pick<ServiceDefinition<{ readonly kind: string }, unknown>, 'name' | 'endpointKey'>;
  /** The service's listener on the front door (its primary and, with a standby, its secondary). */
  server(frontDoor: FrontDoor): Server;
}

export interface Composition {
  readonly store: TableStore;
  readonly queues: QueueStore;
  /** Every service of `serviceDefinitions`, in its order. */
  readonly services: readonly ComposedService[];
  /** The read-access secondary's replication status, over a hot standby (with --secondary-database). */
  readonly replication?: ReplicationSource | undefined;
  /** Stops the sweeps, then closes the secondary's stores and the engine. */
  close(): Promise<void>;
}

/**
 * How often the reclaim runs: every minute, or as often as the grace when that is shorter (a
 * short grace is for freeing space soon), but at most once a second.
 */
function reclaimIntervalMsOf(config: StoreConfig): number {
  return Math.min(60_000, Math.max(1000, contentGraceMsOf(config)));
}

/**
 * What the server's workload watch (src/observe) puts between the engine and the services: its
 * interceptors (http/interceptors.ts) around the stores' methods and the Table service's queries.
 */
export interface Watch {
  readonly onCommit: CommitObserver;
  /** The stores the primary's services work on, their methods intercepted (or as they are). */
  stores(engine: ServiceStores, clock: Clock): ServiceStores;
  /** The Table service's operations with its queries intercepted (or as they are). */
  tableServices(services: TableServices): TableServices;
  /** The read-access secondary's replication status, for metrics. */
  replication?: ReplicationSource | undefined;
}

export interface ComposeOptions extends Pick<EngineOptions, 'onReachability' | 'wait'> {
  /** The sweep of expired messages: its interval and bounds (sweep.ts). */
  readonly purge?: SweepOptions;
  /** Hears of a failed run of the blob store's reclaimContent (the next run tries again). */
  readonly onReclaimError?: (error: unknown) => void;
  /** The queue and blob services' clock (tests inject one: domain/clock.ts); default the system clock. */
  readonly queueClock?: Clock;
  /** How long the Blob service's rehydrations from the archive tier take (--blob-rehydrate-delay). */
  readonly blobRehydrateDelayMs?: number;
  /** Keep blobs' previous versions (--blob-versioning). */
  readonly blobVersioning?: boolean;
  /** Keep deleted containers this many days (--container-soft-delete-days). */
  readonly containerSoftDeleteDays?: number;
}

/** One definition's operations over the primary and the secondary, bound to its type. */
function composeService<R extends { readonly kind: string }, S>(
  definition: ServiceModule<R, S>,
  primary: ServiceContext,
  secondary: ServiceContext | undefined,
  watched: ((services: S) => S) | undefined,
): ComposedService {
  const opened = definition.open(primary);
  const services = watched === undefined ? opened : watched(opened);
  const secondaryServices = secondary && definition.open(secondary);
  return { definition, server: (frontDoor) => frontDoor.server(definition, services, secondaryServices) };
}

/**
 * The engine, every service over it, the sweeps (expired messages, stale blob content), and the read-access
 * secondary when there is a standby. `watch` wraps the primary's stores and services (src/observe).
 */
export async function compose(config: StoreConfig, watch?: Watch, options: ComposeOptions = {}): Promise<Composition> {
  const engine = await openEngine(config, { ...options, onCommit: watch?.onCommit });
  const clock = options.queueClock ?? systemClock;
  const standby = await openStandbyEngine(config, engine).catch(async (error: unknown) => {
    await engine.close();
    throw error;
  });
  if (watch !== undefined) watch.replication = standby?.replication;
  const stores = watch === undefined ? engine : watch.stores(engine, clock);
  // Over the standby's stores only read operations are routed (the front door refuses the rest).
  const { blobRehydrateDelayMs, blobVersioning, containerSoftDeleteDays } = options;
  const blob = { blobRehydrateDelayMs, blobVersioning, containerSoftDeleteDays };
  const secondary = standby && { stores: standby, clock, replication: standby.replication, ...blob };
  const primary = { stores, clock, ...blob };
  const services = serviceDefinitions.map((service) => service.compose(primary, secondary, watch));
  const sweeps = startSweeps(engine, config, clock, options);
  return {
    store: stores.tables,
    queues: engine.queues,
    services,
    replication: standby?.replication,
    close: async () => {
      for (const sweep of sweeps) await sweep.stop();
      await standby?.close();
      await engine.close();
    },
  };
}

/** The sweeps over the primary's engine: expired messages, and blob content nothing references. */
function startSweeps(engine: Engine, config: StoreConfig, clock: Clock, options: ComposeOptions): Sweep[] {
  const expiry = new Sweep((nowMs, limit) => engine.queues.purgeExpired(nowMs, limit), {
    nowMs: () => clock.nowMs(),
    ...options.purge,
  });
  const reclaim = new Sweep(
    (nowMs, limit) => engine.blobs.reclaimContent(nowMs, nowMs - stagedBlockLifetimeMs, limit),
    { nowMs: () => clock.nowMs(), onError: options.onReclaimError, intervalMs: reclaimIntervalMsOf(config) },
  );
  expiry.start();
  reclaim.start();
  return [expiry, reclaim];
}

/**
 * Staged blocks never committed are dropped a week after they were staged (put-block: "discarded
 * after a week"); the store also frees content nothing references, after its own grace.
 */
const stagedBlockLifetimeMs = 7 * 24 * 60 * 60 * 1000;
