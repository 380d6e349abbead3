// The workload watch: what each table's traffic looks like, in bounded memory. Per table it keeps
// the busiest partitions (TopCounter), the busiest $filter shapes with entities read and returned,
// the order of inserted keys (append / prepend), and the largest and widest entities written.
// Insights (insights.ts) and partition metrics are read from it. Requests of Cerulean's own tools
// (tool-traffic.ts) are left out: an import's key order or an export's scan is no application's.
import { entitySizeBytes, keyedSizeBytes } from '../domain/entity.js';
import { compareIndexKeys } from '../domain/keys.js';
import { partitionAdmitOneIn, partitionsWatchedMax, shapesWatchedMax, tablesWatchedMax } from '../limits.js';
import type { QueryClass } from '../table/query/index.js';
import type { FilterFacts } from '../table/query/shape.js';
import type { Write } from '../storage/table-store.js';
import { servingTool } from './tool-traffic.js';
import { TopCounter } from './top-counter.js';

export interface PartitionWatch {
  /** Entities inserted minus entities deleted through this partition while watched. */
  netInserts: number;
  /** Entities read or written in the current second, and the most in any one second. */
  second: number;
  inSecond: number;
  peakPerSecond: number;
}

export interface ShapeWatch {
  readonly queryClass: QueryClass;
  readonly facts: FilterFacts;
  queries: number;
  read: number;
  returned: number;
  /** Pages that returned at most one entity. */
  singleRowQueries: number;
}

export interface KeyOrder {
  /** Inserts seen, and how many of them were above every key inserted before (append) or below (prepend). */
  inserts: number;
  appends: number;
  prepends: number;
  highest: readonly [string, string] | undefined;
  lowest: readonly [string, string] | undefined;
}

export interface EntityExtremes {
  /** Writes of at least `largeEntityBytes`, and the largest seen. */
  large: number;
  largestBytes: number;
  largestKeys: readonly [string, string] | undefined;
  /** Writes of at least `wideEntityProperties` properties, and the widest seen. */
  wide: number;
  widestProperties: number;
  widestKeys: readonly [string, string] | undefined;
}

export interface TableWatch {
  readonly account: string;
  readonly table: string;
  /** Entities read or written through this table while watched (queries count what they return). */
  entities: number;
  readonly partitions: TopCounter<PartitionWatch>;
  readonly shapes: TopCounter<ShapeWatch>;
  readonly order: KeyOrder;
  readonly extremes: EntityExtremes;
}

/**
 * An entity this big (Azure REST: understanding-the-table-service-data-model accounting) is worth a look: the limit is
 * 1 MiB.
 */
export const largeEntityBytes = 256 * 1024;
/** This many custom properties is a wide entity: the limit is 252. */
export const wideEntityProperties = 100;

export class Workload {
  private tables = newTables();
  private since = new Date();

  constructor(private readonly now: () => number = Date.now) {}

  get observedSince(): Date {
    return this.since;
  }

  /** Forgets everything seen so far. */
  reset(): void {
    this.tables = newTables();
    this.since = new Date();
  }

  watched(): TableWatch[] {
    return this.tables.top().map((entry) => entry.value);
  }

  /** `entities` read or written in one partition (undefined: several, e.g. a table scan). */
  touched(account: string, table: string, partitionKey: string | undefined, entities: number): void {
    if (servingTool()) return;
    const watch = this.table(account, table, entities);
    if (partitionKey !== undefined) this.partition(watch, partitionKey, entities);
  }

  /** A commit's writes (all in one partition), once it is durable. */
  wrote(account: string, table: string, writes: readonly Write[]): void {
    if (servingTool()) return;
    const watch = this.table(account, table, writes.length);
    const partition = this.partition(watch, writes[0]!.partitionKey, writes.length);
    for (const write of writes) {
      if (write.action.kind === 'delete') {
        if (partition !== undefined) partition.netInserts--;
        continue;
      }
      // Inserts and upserts create keys; updates with a condition address existing ones.
      if (write.condition.kind === 'absent' || write.condition.kind === 'none') {
        if (partition !== undefined) partition.netInserts++;
        noteKeyOrder(watch.order, write.partitionKey, write.rowKey);
      }
      noteExtremes(watch.extremes, write);
    }
  }

  /** One page of Query Entities. */
  queried(
    account: string,
    table: string,
    facts: FilterFacts,
    queryClass: QueryClass,
    read: number,
    returned: number,
  ): void {
    if (servingTool()) return;
    // A page inside one partition is traffic of that partition (at least one entity's worth).
    const entities = facts.partitionKey === undefined ? returned : Math.max(returned, 1);
    const watch = this.table(account, table, entities);
    if (facts.partitionKey !== undefined) this.partition(watch, facts.partitionKey, entities);
    const shape = watch.shapes.add(`${queryClass} ${facts.shape}`, 1, () => ({
      queryClass,
      facts,
      queries: 0,
      read: 0,
      returned: 0,
      singleRowQueries: 0,
    }))!.value;
    shape.queries++;
    shape.read += read;
    shape.returned += returned;
    if (returned <= 1) shape.singleRowQueries++;
  }

  /** Counts `entities` for the partition, in its total and in the current second (unless it was not let in). */
  private partition(watch: TableWatch, partitionKey: string, entities: number): PartitionWatch | undefined {
    const partition = watch.partitions.add(partitionKey, entities, newPartition)?.value;
    if (partition === undefined) return undefined;
    const second = Math.floor(this.now() / 1000);
    if (partition.second !== second) {
      partition.second = second;
      partition.inSecond = 0;
    }
    partition.inSecond += entities;
    if (partition.inSecond > partition.peakPerSecond) partition.peakPerSecond = partition.inSecond;
    return partition;
  }

  private table(account: string, table: string, entities: number): TableWatch {
    // `table` is the stored name (TableInfo.name): one spelling per table.
    const watch = this.tables.add(`${account}/${table}`, entities, () => newTable(account, table))!.value;
    watch.entities += entities;
    return watch;
  }
}

function newTables(): TopCounter<TableWatch> {
  return new TopCounter<TableWatch>(tablesWatchedMax);
}

function newTable(account: string, table: string): TableWatch {
  return {
    account,
    table,
    entities: 0,
    // Partitions see every point read, over as many keys as a table has: sample and hold.
    partitions: new TopCounter(partitionsWatchedMax, partitionAdmitOneIn),
    shapes: new TopCounter(shapesWatchedMax),
    order: { inserts: 0, appends: 0, prepends: 0, highest: undefined, lowest: undefined },
    extremes: {
      large: 0,
      largestBytes: 0,
      largestKeys: undefined,
      wide: 0,
      widestProperties: 0,
      widestKeys: undefined,
    },
  };
}

function newPartition(): PartitionWatch {
  return { netInserts: 0, second: 0, inSecond: 0, peakPerSecond: 0 };
}

function noteKeyOrder(order: KeyOrder, partitionKey: string, rowKey: string): void {
  const key = [partitionKey, rowKey] as const;
  order.inserts++;
  if (order.highest === undefined || compareIndexKeys(key, order.highest) > 0) {
    order.highest = key;
    order.appends++;
  }
  if (order.lowest === undefined || compareIndexKeys(key, order.lowest) < 0) {
    order.lowest = key;
    order.prepends++;
  }
}

function noteExtremes(extremes: EntityExtremes, write: Write): void {
  if (write.action.kind === 'delete') return;
  const { stored } = write.action;
  const keys = [write.partitionKey, write.rowKey] as const;
  // Facts the request path already has, so that watching does not decode the properties.
  const count = stored?.count ?? write.action.properties.size;
  if (count >= wideEntityProperties) extremes.wide++;
  if (count > extremes.widestProperties) {
    extremes.widestProperties = count;
    extremes.widestKeys = keys;
  }
  const bytes =
    stored === undefined
      ? entitySizeBytes(write.partitionKey, write.rowKey, write.action.properties)
      : keyedSizeBytes(write.partitionKey, write.rowKey, stored.propertyBytes);
  if (bytes >= largeEntityBytes) extremes.large++;
  if (bytes > extremes.largestBytes) {
    extremes.largestBytes = bytes;
    extremes.largestKeys = keys;
  }
}
