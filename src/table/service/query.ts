// Query Entities (Azure REST: querying-tables-and-entities, query-timeout-and-pagination): reads only the key ranges
// the plan names, applies the full
// filter to what it reads, and ends a page at $top results or when its work budget runs out.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { pageBytesMax, pageSizeMax, queryBudgetMs, queryRowsReadMax } from '../../limits.js';
import { clipRanges, compileEntityQuery, intersectRanges, type QueryClass } from '../query/index.js';
import type { TableStore, TableInfo } from '../../storage/table-store.js';
import { type Entity, type EntityKeys } from '../../domain/entity.js';
import { type KeyRange } from '../../domain/keys.js';

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
  constructor(private readonly store: TableStore) {}

  async queryEntities(table: TableInfo, query: EntityQuery): Promise<EntityPage> {
    const { plan, conditions, matches } = compileEntityQuery(query.filter);
    const allowed = query.keyRange === undefined ? plan.ranges : intersectRanges(plan.ranges, query.keyRange);
    const ranges = query.resume === undefined ? [...allowed] : clipRanges(allowed, resumeBound(query.resume));
    const page = new PageBudget(query.top ?? pageSizeMax);
    const finish = (next: Entity | undefined): EntityPage => ({
      entities: page.entities,
      next: next && keysOf(next),
      queryClass: plan.queryClass,
      scanned: page.scanned,
    });
    for (let r = 0; r < ranges.length; r++) {
      let range: KeyRange = ranges[r]!;
      if (page.full()) return finish(await this.firstOf(table, ranges.slice(r)));
      for (;;) {
        // One more than the page has room for, to see whether more follow.
        const step = await this.store.scan(table, range, { conditions, limit: page.room() + 1 });
        page.scanned += step.examined - step.entities.length; // rows the store's conditions dropped
        page.bytes += step.bytes;
        for (const row of step.entities) {
          page.checkOrder(row);
          // Only $top ends a page inside a step: the step's rows are read (and counted) already, and
          // a page cut there would read them again.
          if (page.atTop()) return finish(row);
          page.scanned++;
          if (matches(row)) page.add(row);
        }
        if (step.next === undefined) break;
        range = { ...range, lower: step.next };
        // The page is over but the range goes on: resume at its next entity, if any.
        if (page.full()) return finish(await this.firstOf(table, [range, ...ranges.slice(r + 1)]));
      }
    }
    return finish(undefined);
  }

  /** The first stored entity of the first non-empty range. */
  private async firstOf(table: TableInfo, ranges: readonly KeyRange[]): Promise<Entity | undefined> {
    for (let range of ranges) {
      for (;;) {
        const step = await this.store.scan(table, range, { conditions: [], limit: 1 });
        if (step.entities.length > 0) return step.entities[0];
        if (step.next === undefined) break;
        range = { ...range, lower: step.next };
      }
    }
    return undefined;
  }
}

/**
 * When a page ends: at $top entities, or when its rows, bytes or time run out (Azure REST:
 * query-timeout-and-pagination).
 */
class PageBudget {
  readonly entities: Entity[] = [];
  scanned = 0;
  /** Bytes of properties read from the store, as it keeps them. */
  bytes = 0;
  private lastRead: Entity | undefined;
  private readonly deadline = performance.now() + queryBudgetMs;

  constructor(readonly size: number) {}

  add(entity: Entity): void {
    this.entities.push(entity);
  }

  /** Every engine returns rows in key order; a page's continuation depends on it. */
  checkOrder(row: Entity): void {
    const last = this.lastRead;
    assert(
      last === undefined ||
        last.partitionKey < row.partitionKey ||
        (last.partitionKey === row.partitionKey && last.rowKey < row.rowKey),
      'scan rows come in key order',
    );
    this.lastRead = row;
  }

  atTop(): boolean {
    return this.entities.length >= this.size;
  }

  room(): number {
    return Math.max(0, this.size - this.entities.length);
  }

  full(): boolean {
    return (
      this.atTop() ||
      this.scanned >= queryRowsReadMax ||
      this.bytes >= pageBytesMax ||
      performance.now() > this.deadline
    );
  }
}
function keysOf(entity: Entity): EntityKeys {
  return { partitionKey: entity.partitionKey, rowKey: entity.rowKey };
}

function resumeBound(resume: NonNullable<EntityQuery['resume']>): NonNullable<KeyRange['lower']> {
  return resume.rowKey === undefined
    ? { partitionKey: resume.partitionKey, inclusive: true }
    : { partitionKey: resume.partitionKey, rowKey: resume.rowKey, inclusive: true };
}
