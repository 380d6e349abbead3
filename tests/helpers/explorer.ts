// Driving the explorer page in tests: open it, open a table, run a query, read the grid, and read
// entities back over raw HTTP with their EDM types as the service reports them.
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { send } from './http.js';
import type { RunningServer } from './server.js';

export function explorerUrl(server: RunningServer): string {
  return `http://127.0.0.1:${server.port}/_explorer/`;
}

/** Loads the page and waits until it has connected and listed the tables. */
export async function openExplorer(page: Page, server: RunningServer): Promise<void> {
  await page.goto(explorerUrl(server));
  await page.waitForSelector('body[data-connected]');
}

/** Loads the page, switches to Blobs and opens `container`, waiting for its first listing. */
export async function openContainer(page: Page, server: RunningServer, container: string): Promise<void> {
  await openExplorer(page, server);
  await page.click('#service-blobs');
  await page.click(`#container-list .table-link[data-container="${container}"]`);
  await page.waitForSelector(`[data-container-view="${container}"] #blobs tbody[data-loaded]`);
}

export async function openTable(page: Page, table: string): Promise<void> {
  await page.fill('#table-filter', '');
  await page.click(`#table-list .table-link[data-table="${table}"]`);
  await page.waitForSelector('#page-label:has-text("page 1")');
}

/** Sets the raw query fields, runs it and waits for the first page. */
export async function runQuery(page: Page, query: { filter?: string; select?: string; top?: string }): Promise<void> {
  await page.fill('#filter', query.filter ?? '');
  await page.fill('#select', query.select ?? '');
  await page.fill('#top', query.top ?? '20');
  await page.evaluate(() => ((globalThis as any).document.getElementById('page-label').textContent = ''));
  await page.click('#run-query');
  await page.waitForSelector('#page-label:has-text("page 1")');
}

/** The RowKeys of the grid's rows, top to bottom. */
export function gridRowKeys(page: Page): Promise<string[]> {
  return page.$$eval('#grid tbody tr[data-rk]', (rows) => rows.map((row) => (row as any).dataset.rk as string));
}

export function gridColumns(page: Page): Promise<string[]> {
  return page.$$eval('#grid thead .sort', (buttons) =>
    buttons.map((button) => (button as any).dataset.column as string),
  );
}

/** `{name: [type, wire value]}` of one entity as the service sends it (minimal metadata, typed). */
export type TypedProperties = Record<string, [string, unknown]>;

export async function typedEntity(
  server: RunningServer,
  table: string,
  pk: string,
  rk: string,
): Promise<TypedProperties | undefined> {
  const key = (text: string) => encodeURIComponent(text.replace(/'/g, "''"));
  const response = await send(server.port, {
    method: 'GET',
    path: `/devstoreaccount1/${table}(PartitionKey='${key(pk)}',RowKey='${key(rk)}')`,
    headers: { Accept: 'application/json;odata=minimalmetadata' },
  });
  if (response.status === 404) return undefined;
  assert.equal(response.status, 200, response.text);
  return typedProperties(response.json());
}

/** Every entity of a table, typed, keyed by `pk/rk`. */
export async function typedTable(server: RunningServer, table: string): Promise<Map<string, TypedProperties>> {
  const entities = new Map<string, TypedProperties>();
  let next = '';
  do {
    const response = await send(server.port, {
      method: 'GET',
      path: `/devstoreaccount1/${table}()${next}`,
      headers: { Accept: 'application/json;odata=minimalmetadata' },
    });
    assert.equal(response.status, 200, response.text);
    for (const wire of response.json().value)
      entities.set(`${wire.PartitionKey}/${wire.RowKey}`, typedProperties(wire));
    const pk = response.headers['x-ms-continuation-nextpartitionkey'];
    const rk = response.headers['x-ms-continuation-nextrowkey'];
    next =
      pk === undefined
        ? ''
        : `?NextPartitionKey=${encodeURIComponent(String(pk))}&NextRowKey=${encodeURIComponent(String(rk ?? ''))}`;
  } while (next !== '');
  return entities;
}

function typedProperties(wire: Record<string, unknown>): TypedProperties {
  const properties: TypedProperties = {};
  for (const [name, value] of Object.entries(wire)) {
    if (name.includes('@') || name.startsWith('odata.') || ['PartitionKey', 'RowKey', 'Timestamp'].includes(name))
      continue;
    const annotation = wire[`${name}@odata.type`];
    const type =
      typeof annotation === 'string'
        ? annotation
        : typeof value === 'string'
          ? 'Edm.String'
          : typeof value === 'boolean'
            ? 'Edm.Boolean'
            : Number.isInteger(value)
              ? 'Edm.Int32'
              : 'Edm.Double';
    properties[name] = [type, value];
  }
  return properties;
}
