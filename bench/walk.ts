// A query followed through its continuations to the last page, with Cerulean's counts of the
// entities each page read and returned (x-cerulean-query-plan).
import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import { expectStatus, type TableHttpClient } from './client.js';

export interface Walk {
  pages: number;
  returned: number;
  scanned: number;
  ms: number;
}

/** Follows continuations to the end; counts come from the x-cerulean-query-plan header. */
export async function walk(client: TableHttpClient, table: string, filter: string, top: number): Promise<Walk> {
  const base = `$filter=${encodeURIComponent(filter)}&$top=${top}`;
  const result: Walk = { pages: 0, returned: 0, scanned: 0, ms: 0 };
  const started = performance.now();
  let continuation = '';
  do {
    const request = client.send({ method: 'GET', resource: `${table}()`, query: base + continuation });
    const response = await expectStatus(`query ${filter}`, request, 200);
    const plan = /scanned=(\d+); returned=(\d+)/.exec(String(response.headers['x-cerulean-query-plan']));
    if (plan === null) throw new Error(`no plan header on page ${result.pages + 1}`);
    result.pages++;
    result.scanned += Number(plan[1]);
    result.returned += Number(plan[2]);
    continuation = continuationQuery(response.headers);
  } while (continuation !== '');
  result.ms = performance.now() - started;
  return result;
}

/** `&NextPartitionKey=…&NextRowKey=…` from a page's headers; '' on the last page. */
function continuationQuery(headers: IncomingHttpHeaders): string {
  const nextPk = headers['x-ms-continuation-nextpartitionkey'];
  const nextRk = headers['x-ms-continuation-nextrowkey'];
  if (nextPk === undefined) return '';
  const rowKey = nextRk === undefined ? '' : `&NextRowKey=${encodeURIComponent(String(nextRk))}`;
  return `&NextPartitionKey=${encodeURIComponent(String(nextPk))}${rowKey}`;
}
