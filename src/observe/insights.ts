// Design insights: the workload watch read in the terms of the Azure Table design guides
// ("Design for querying", "Table design patterns", scalability targets). Each finding names the
// anti-pattern, shows its evidence and the pattern that fixes it.
import { blobFindings } from './blob-insights.js';
import type { ContainerWatch } from './blob-watch.js';
import type { QueueDepths } from './queue-metrics.js';
import { queueFindings } from './queue-insights.js';
import { largeEntityBytes, wideEntityProperties, type TableWatch, type Workload } from './workload.js';

export const insightKinds = [
  'hot-partition',
  'table-scan',
  'partition-scan',
  'point-query-candidate',
  'prepend-append',
  'partition-split',
  'large-entity',
  'wide-entity',
  'poison-backlog',
  'repeated-dequeue',
  'small-blocks',
  'repeated-whole-read',
  'lease-conflicts',
] as const;

export type InsightKind = (typeof insightKinds)[number];

export interface Finding {
  readonly kind: InsightKind;
  readonly account: string;
  /** The table of a table finding; absent from a queue finding. */
  readonly table?: string;
  /** The queue of a queue finding (poison-backlog, repeated-dequeue); absent from a table finding. */
  readonly queue?: string;
  /** The container of a blob finding (small-blocks, repeated-whole-read, lease-conflicts); a repeated read's blob. */
  readonly container?: string;
  readonly blob?: string;
  /** One line, with the numbers. */
  readonly summary: string;
  readonly evidence: Readonly<Record<string, string | number>>;
  /** The design guide's fix. */
  readonly pattern: string;
  /**
   * Entities read and not returned, for queries: the work the fix saves. Findings come ranked by
   * it, so a filter that reads a hundred entities per entity returned leads. 0 for other kinds.
   */
  readonly wastedEntities: number;
}

export interface InsightsReport {
  readonly observedSince: string;
  readonly findings: readonly Finding[];
  readonly counts: Readonly<Record<InsightKind, number>>;
}

/** Below these amounts of traffic a table says too little to judge. */
const hotPartitionEntitiesMin = 100;
/** A partition taking at least this share of its table's traffic is hot. */
const hotPartitionShare = 0.5;
/** A scan is worth reporting once its shape has read this many entities. */
const scanEntitiesReadMin = 100;
/** Entities read and not returned below which a scan is not worth a finding. */
const scanEntitiesWastedMin = 100;
/** A partition or range scan reading this many entities per entity returned filters on the wrong thing. */
const scanReadPerReturnedMax = 10;
const insertOrderInsertsMin = 50;
/** Share of inserts above (or below) every earlier key that makes the append (prepend) pattern. */
const insertOrderShare = 0.9;
/** A partition that gained this many entities is big enough to be worth splitting. */
const splitEntitiesMin = 100_000;

export interface InsightOptions {
  /** A partition busier than this at its peak second is worth splitting: half its target rate. */
  readonly splitEntitiesPerSecond: number;
}

/**
 * `queues`: the deepest queues, for the queue findings (none when absent); `containers`: the blob
 * watch's containers, for the blob findings.
 */
export function insights(
  workload: Workload,
  options: InsightOptions,
  queues?: QueueDepths,
  containers: readonly ContainerWatch[] = [],
): InsightsReport {
  const findings: Finding[] = workload
    .watched()
    .flatMap((watch) => [
      ...hotPartitions(watch),
      ...scans(watch),
      ...pointQueryCandidates(watch),
      ...insertOrder(watch),
      ...partitionsToSplit(watch, options),
      ...entityExtremes(watch),
    ]);
  if (queues !== undefined) findings.push(...queueFindings(queues.depths, queues.nowMs));
  findings.push(...blobFindings(containers));
  findings.sort((a, b) => b.wastedEntities - a.wastedEntities); // stable: ties keep their order
  const counts = Object.fromEntries(insightKinds.map((kind) => [kind, 0])) as Record<InsightKind, number>;
  for (const finding of findings) counts[finding.kind]++;
  return { observedSince: workload.observedSince.toISOString(), findings, counts };
}

function finding(
  watch: TableWatch,
  kind: InsightKind,
  summary: string,
  evidence: Finding['evidence'],
  pattern: string,
  wastedEntities = 0,
): Finding {
  return { kind, account: watch.account, table: watch.table, summary, evidence, pattern, wastedEntities };
}

function hotPartitions(watch: TableWatch): Finding[] {
  if (watch.entities < hotPartitionEntitiesMin) return [];
  return watch.partitions
    .top(3)
    .filter((entry) => (entry.count - entry.error) / watch.entities >= hotPartitionShare)
    .map((entry) => {
      const share = entry.count / watch.entities;
      return finding(
        watch,
        'hot-partition',
        `Partition '${entry.key}' takes ${percent(share)} of the traffic of table ${watch.table} ` +
          `(${entry.count} of ${watch.entities} entities read or written).`,
        {
          partitionKey: entry.key,
          entities: entry.count,
          tableEntities: watch.entities,
          share: round(share),
          partitionsSeen: watch.partitions.size,
        },
        'One partition is served by one server (target: 2,000 entities/s). Spread the load over many ' +
          'partitions: choose a PartitionKey with many distinct, evenly used values, or prefix it with a hash ' +
          'bucket of the key (high-volume insert pattern); cache or denormalize what every client reads.',
      );
    });
}

function scans(watch: TableWatch): Finding[] {
  const found: Finding[] = [];
  for (const { value: shape } of watch.shapes.top()) {
    // A scan that returns all it reads (an export, paging through a table) wastes nothing.
    if (shape.read < scanEntitiesReadMin || shape.read - shape.returned < scanEntitiesWastedMin) continue;
    const wasted = shape.read - shape.returned;
    const perReturned = shape.returned === 0 ? shape.read : shape.read / shape.returned;
    const evidence = {
      filter: shape.facts.shape || '(none)',
      queryClass: shape.queryClass,
      queries: shape.queries,
      entitiesRead: shape.read,
      entitiesReturned: shape.returned,
      readPerReturned: round(perReturned),
    };
    if (shape.queryClass === 'table-scan') {
      found.push(
        finding(
          watch,
          'table-scan',
          `Table scan: ${queries(shape.queries)} of shape ${evidence.filter} read ${shape.read} entities of ${watch.table} ` +
            `to return ${shape.returned} (${evidence.readPerReturned} read per returned).`,
          evidence,
          'A filter without PartitionKey reads every partition. Query by PartitionKey (and RowKey) instead: ' +
            'make the property you look up by part of the keys, or keep index entities whose keys are that ' +
            'property (inter-partition secondary index pattern).',
          wasted,
        ),
      );
    } else if (shape.queryClass !== 'point' && perReturned >= scanReadPerReturnedMax) {
      found.push(
        finding(
          watch,
          'partition-scan',
          `Partition scan: ${queries(shape.queries)} of shape ${evidence.filter} read ${evidence.readPerReturned} ` +
            `entities of ${watch.table} for each one returned.`,
          evidence,
          'The filter narrows the keys but then tests other properties. Make those properties part of the ' +
            'RowKey (compound key pattern) or keep index entities in the same partition keyed by them ' +
            '(intra-partition secondary index pattern), so the query reads only what it returns.',
          wasted,
        ),
      );
    }
  }
  return found;
}

function pointQueryCandidates(watch: TableWatch): Finding[] {
  const found: Finding[] = [];
  for (const { value: shape } of watch.shapes.top()) {
    const evidence = {
      filter: shape.facts.shape,
      queryClass: shape.queryClass,
      queries: shape.queries,
      entitiesRead: shape.read,
      entitiesReturned: shape.returned,
    };
    if (shape.queryClass === 'point' && shape.facts.propertyConditions > 0) {
      found.push(
        finding(
          watch,
          'point-query-candidate',
          `${queries(shape.queries)} of shape ${shape.facts.shape} name both keys inside a filter with other conditions.`,
          evidence,
          'Both keys identify one entity: retrieve it with a point query (GET /Table(PartitionKey=…,RowKey=…)), ' +
            'the cheapest read there is, and test the other conditions in the client.',
        ),
      );
    } else if (
      shape.queryClass === 'table-scan' &&
      shape.facts.rowKeyEquality &&
      shape.singleRowQueries === shape.queries
    ) {
      found.push(
        finding(
          watch,
          'point-query-candidate',
          `${queries(shape.queries)} of shape ${shape.facts.shape} scan the whole table to find one entity by RowKey.`,
          evidence,
          'Add the PartitionKey to the filter to make it a point query, or keep an index entity that maps ' +
            'this RowKey to its PartitionKey (index entities pattern).',
          shape.read - shape.returned,
        ),
      );
    }
  }
  return found;
}

function insertOrder(watch: TableWatch): Finding[] {
  const { inserts, appends, prepends } = watch.order;
  if (inserts < insertOrderInsertsMin) return [];
  const found: Finding[] = [];
  for (const [direction, count, end] of [
    ['append', appends, 'after the highest'],
    ['prepend', prepends, 'before the lowest'],
  ] as const) {
    const share = count / inserts;
    if (share < insertOrderShare) continue;
    found.push(
      finding(
        watch,
        'prepend-append',
        `${percent(share)} of ${inserts} inserts into ${watch.table} went ${end} key so far (${direction} anti-pattern).`,
        { direction, inserts, [`${direction}s`]: count, share: round(share) },
        'Keys that only grow (or only shrink), such as timestamps or counters, send every insert to the last ' +
          '(first) partition range, which one server handles. Spread inserts over partitions: prefix the ' +
          'PartitionKey with a hash bucket, or put the time in the RowKey under a spread PartitionKey ' +
          '(prepend/append anti-pattern, high-volume delete and log tail patterns).',
      ),
    );
  }
  return found;
}

function partitionsToSplit(watch: TableWatch, options: InsightOptions): Finding[] {
  return watch.partitions
    .top()
    .filter(
      ({ value }) => value.peakPerSecond >= options.splitEntitiesPerSecond || value.netInserts >= splitEntitiesMin,
    )
    .map(({ key, value }) =>
      finding(
        watch,
        'partition-split',
        `Partition '${key}' of ${watch.table} peaked at ${value.peakPerSecond} entities/s and gained ${value.netInserts} entities.`,
        {
          partitionKey: key,
          peakEntitiesPerSecond: value.peakPerSecond,
          thresholdEntitiesPerSecond: options.splitEntitiesPerSecond,
          entitiesGained: value.netInserts,
          thresholdEntities: splitEntitiesMin,
        },
        'This partition is near what one partition can serve. Split it: add a suffix or hash bucket to its ' +
          'PartitionKey so its entities spread over several partitions, and query them in parallel.',
      ),
    );
}

function entityExtremes(watch: TableWatch): Finding[] {
  const { large, largestBytes, largestKeys, wide, widestProperties, widestKeys } = watch.extremes;
  const found: Finding[] = [];
  if (large > 0) {
    found.push(
      finding(
        watch,
        'large-entity',
        `${large} writes to ${watch.table} were entities of ${kib(largeEntityBytes)} or more (largest ${kib(largestBytes)}).`,
        {
          writes: large,
          largestBytes,
          partitionKey: largestKeys![0],
          rowKey: largestKeys![1],
          thresholdBytes: largeEntityBytes,
        },
        'Every read of such an entity moves all of it, and the limit is 1 MiB. Store large values in Blob ' +
          'storage and keep their names in the entity (large entities pattern), or split them over several ' +
          'entities of one partition.',
      ),
    );
  }
  if (wide > 0) {
    found.push(
      finding(
        watch,
        'wide-entity',
        `${wide} writes to ${watch.table} had ${wideEntityProperties} properties or more (widest ${widestProperties}).`,
        {
          writes: wide,
          widestProperties,
          partitionKey: widestKeys![0],
          rowKey: widestKeys![1],
          thresholdProperties: wideEntityProperties,
        },
        'The limit is 252 properties. Split the properties over several entities of one partition, written ' +
          'together in an entity group transaction (wide entities pattern), or keep a serialized blob of them.',
      ),
    );
  }
  return found;
}

function queries(count: number): string {
  return count === 1 ? '1 query' : `${count} queries`;
}

function percent(share: number): string {
  return `${Math.round(share * 100)} %`;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function kib(bytes: number): string {
  return `${Math.round(bytes / 1024)} KiB`;
}
