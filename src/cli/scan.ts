// Reading a table page by page with continuation tokens, so memory stays constant whatever its
// size. Values come as the service wrote them (disableTypeConversion), converted to rows.
import type { TableClient } from '@azure/data-tables';
import type { Row } from './formats/row.js';
import { fromSdkEntity } from './sdk-entity.js';

/** The service's largest page ($top at most 1,000). */
const pageSizeMax = 1000;

export interface ScanOptions {
  readonly filter?: string | undefined;
  readonly select?: readonly string[] | undefined;
}

/** Every entity `options` selects, one page (≤ 1,000 rows) at a time, in key order. */
export async function* scanPages(client: TableClient, options: ScanOptions = {}): AsyncGenerator<Row[]> {
  const pages = client
    .listEntities({
      queryOptions: {
        ...(options.filter && { filter: options.filter }),
        ...(options.select && { select: [...options.select] }),
      },
      disableTypeConversion: true,
    })
    .byPage({ maxPageSize: pageSizeMax });
  for await (const page of pages) yield page.map(fromSdkEntity);
}

/** How many entities the table holds (reads their keys only). */
export async function countEntities(client: TableClient, filter?: string): Promise<number> {
  let count = 0;
  for await (const page of scanPages(client, { filter, select: ['RowKey'] })) count += page.length;
  return count;
}
