// Query Entities (query.md §1, §4): reads only the key ranges the plan names, applies the full
// filter to what it reads, and ends a page at $top results or when its work budget runs out.
import { performance } from 'node:perf_hooks';
import { pageSizeMax, queryBudgetMs, queryRowsReadMax, scanChunkRows } from '../limits.js';
import type { Entity } from '../protocol/edm.js';
import type { EntityKeys } from '../protocol/keys.js';
import { clipRanges, compileEntityQuery, type QueryClass } from '../query/index.js';
import { intersectRanges } from '../query/intersect.js';
import type { KeyRange, Store, TableInfo } from '../storage/store.js';

export interface EntityQuery {
  readonly filter: string | undefined;
  /** Page size, 1…1000; undefined = 1000. */
  readonly top: number | undefined;
  /** NextPartitionKey / NextRowKey of the previous page (NextRowKey may be absent). */
  readonly resume: { readonly partitionKey: string; readonly rowKey: string | undefined } | undefined;
  /** The keys the caller may read (a service SAS key range); undefined = all. */
  readonly keyRange?: KeyRange | undefined;
}

export interface EntityPage {
  readonly entities: readonly Entity[];
  /** The first entity not yet returned, when the query is not finished. */
  readonly next: EntityKeys | undefined;
  readonly queryClass: QueryClass;
  /** Entities read from storage for this page, matched or not. */
  readonly scanned: number;
}

export class QueryService {
  constructor(private readonly store: Store) {}

  async queryEntities(table: TableInfo, query: EntityQuery): Promise<EntityPage> {
    const { plan, matches } = compileEntityQuery(query.filter);
    const allowed = query.keyRange === undefined ? plan.ranges : intersectRanges(plan.ranges, query.keyRange);
    const ranges = query.resume === undefined ? [...allowed] : clipRanges(allowed, resumeBound(query.resume));
    const pageSize = query.top ?? pageSizeMax;
    const deadline = performance.now() + queryBudgetMs;
    const entities: Entity[] = [];
    let scanned = 0;
    // Start with what an unfiltered page needs (+1 to see whether more follow), then grow.
    let chunkRows = Math.min(scanChunkRows, pageSize + 1);
    for (let r = 0; r < ranges.length; r++) {
      let range: KeyRange = ranges[r]!;
      for (;;) {
        const rows = await this.store.scan(table, range, chunkRows);
        for (let i = 0; i < rows.length; i++) {
          const row = rows[i]!;
          if (entities.length === pageSize || scanned >= queryRowsReadMax) {
            return { entities, next: keysOf(row), queryClass: plan.queryClass, scanned };
          }
          scanned++;
          if (matches(row)) entities.push(row);
        }
        if (rows.length < chunkRows) break;
        chunkRows = Math.min(scanChunkRows, chunkRows * 2);
        range = { ...range, lower: afterKey(rows[rows.length - 1]!) };
        if (entities.length === pageSize || scanned >= queryRowsReadMax || performance.now() > deadline) {
          // The page is over but the range goes on: resume at its next entity, if any.
          const [following] = await this.store.scan(table, range, 1);
          const next = following ?? (await this.firstOf(table, ranges.slice(r + 1)));
          return { entities, next: next && keysOf(next), queryClass: plan.queryClass, scanned };
        }
      }
      if (entities.length === pageSize || performance.now() > deadline) {
        const next = await this.firstOf(table, ranges.slice(r + 1));
        return { entities, next: next && keysOf(next), queryClass: plan.queryClass, scanned };
      }
    }
    return { entities, next: undefined, queryClass: plan.queryClass, scanned };
  }

  /** The first stored entity of the first non-empty range. */
  private async firstOf(table: TableInfo, ranges: readonly KeyRange[]): Promise<Entity | undefined> {
    for (const range of ranges) {
      const [first] = await this.store.scan(table, range, 1);
      if (first !== undefined) return first;
    }
    return undefined;
  }
}

function keysOf(entity: Entity): EntityKeys {
  return { partitionKey: entity.partitionKey, rowKey: entity.rowKey };
}

function afterKey(entity: Entity): KeyRange['lower'] {
  return { partitionKey: entity.partitionKey, rowKey: entity.rowKey, inclusive: false };
}

function resumeBound(resume: NonNullable<EntityQuery['resume']>): NonNullable<KeyRange['lower']> {
  return resume.rowKey === undefined
    ? { partitionKey: resume.partitionKey, inclusive: true }
    : { partitionKey: resume.partitionKey, rowKey: resume.rowKey, inclusive: true };
}
