// Query Entities (query.md §1, §4): reads only the key ranges the plan names, applies the full
// filter to what it reads, and ends a page at $top results or when its work budget runs out.
import { performance } from 'node:perf_hooks';
import { setImmediate as turnOfEventLoop } from 'node:timers/promises';
import { pageBytesMax, pageSizeMax, queryBudgetMs, queryRowsReadMax, scanChunkRows, scanWindowRows } from '../limits.js';
import type { Entity } from '../protocol/edm.js';
import type { EntityKeys } from '../protocol/keys.js';
import { clipRanges, compileEntityQuery, intersectRanges, type QueryClass } from '../query/index.js';
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
    // Start with what an unfiltered page needs (+1 to see whether more follow), then grow.
    let chunkRows = Math.min(scanChunkRows, page.size + 1);
    for (let r = 0; r < ranges.length; r++) {
      let range: KeyRange = ranges[r]!;
      for (;;) {
        const step = await this.store.scanWhere(table, range, conditions, chunkRows, scanWindowRows);
        page.scanned += step.examined - step.entities.length; // rows the store's conditions dropped
        for (const row of step.entities) {
          if (page.full()) return finish(row);
          page.scanned++;
          if (matches(row)) page.add(row);
        }
        if (step.next === undefined) break;
        range = { ...range, lower: step.next };
        chunkRows = Math.min(scanChunkRows, chunkRows * 2);
        // The page is over but the range goes on: resume at its next entity, if any.
        if (page.full()) return finish(await this.firstOf(table, [range, ...ranges.slice(r + 1)]));
        // A filter the store cannot check reads every row here, up to the page's budget: other
        // requests get their turn between steps instead of waiting for the whole page.
        await turnOfEventLoop();
      }
    }
    return finish(undefined);
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

/** When a page ends: at $top entities, or when its rows, bytes or time run out (query.md §4.1). */
class PageBudget {
  readonly entities: Entity[] = [];
  scanned = 0;
  private bytes = 0;
  private readonly deadline = performance.now() + queryBudgetMs;

  constructor(readonly size: number) {}

  add(entity: Entity): void {
    this.entities.push(entity);
    this.bytes += entity.propertiesJson?.length ?? 0;
  }

  full(): boolean {
    return (
      this.entities.length >= this.size ||
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
