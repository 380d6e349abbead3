// Query Entities as the throttle, the metrics and the workload watch see it: a page is admitted
// for one entity before it runs (in its partition when the filter names one) and charged for the
// rest of what it returned afterwards; its class, entities read and returned, and filter shape
// are noted.
import type { EntityPage, EntityQuery } from '../table/service/query.js';
import { QueryService } from '../table/service/query.js';
import { filterFacts } from '../table/query/shape.js';
import type { TableStore, TableInfo } from '../storage/table-store.js';
import type { Metrics } from './metrics.js';
import type { Watchers } from './observed-store.js';

export class ObservedQueryService extends QueryService {
  constructor(
    store: TableStore,
    private readonly watchers: Watchers & { readonly metrics: Metrics | undefined },
  ) {
    super(store);
  }

  override async queryEntities(table: TableInfo, query: EntityQuery): Promise<EntityPage> {
    const { throttle, workload, metrics } = this.watchers;
    // The same parser the query runs, so an invalid filter fails here with the same error.
    const facts = filterFacts(query.filter);
    throttle?.admit(table.account, table.name, facts.partitionKey, 1);
    const page = await super.queryEntities(table, query);
    const returned = page.entities.length;
    throttle?.charge(table.account, table.name, facts.partitionKey, returned - 1);
    metrics?.queried(page.queryClass, page.scanned, returned);
    workload?.queried(table.account, table.name, facts, page.queryClass, page.scanned, returned);
    return page;
  }
}
