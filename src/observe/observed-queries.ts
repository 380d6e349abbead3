// Query Entities as the throttle, the metrics and the workload watch see it: an interceptor
// (http/interceptors.ts) around the Table service's queries. A page is admitted for one entity
// before it runs (in its partition when the filter names one) and charged for the rest of what it
// returned afterwards; its class, entities read and returned, and filter shape are noted.
import { interceptMethods } from '../http/interceptors.js';
import type { QueryService } from '../table/service/query.js';
import { filterFacts } from '../table/query/shape.js';
import type { Metrics } from './metrics.js';
import type { Watchers } from './observed-store.js';

export function observedQueries(
  queries: QueryService,
  { throttle, workload, metrics }: Watchers & { readonly metrics: Metrics | undefined },
): QueryService {
  return interceptMethods(queries, {
    queryEntities: (next) => async (table, query) => {
      // The same parser the query runs, so an invalid filter fails here with the same error.
      const facts = filterFacts(query.filter);
      throttle?.admit(table.account, table.name, facts.partitionKey, 1);
      const page = await next(table, query);
      const returned = page.entities.length;
      throttle?.charge(table.account, table.name, facts.partitionKey, returned - 1);
      metrics?.queried(page.queryClass, page.scanned, returned);
      workload?.queried(table.account, table.name, facts, page.queryClass, page.scanned, returned);
      return page;
    },
  });
}
