// One table's entities: the query form, a page of results in a grid (union of the page's
// properties, EDM type in every cell, column chooser, sort within the page), paging by
// continuation tokens (first, previous, next), the server's query plan, and row actions.
import {
  deleteEntity,
  queryEntities,
  type Continuation,
  type Credentials,
  type EntityPage,
  type Query,
} from './api.js';
import { queryForm } from './builder.js';
import { h, replace } from './dom.js';
import { shortType, type Entity, type Property } from './edm.js';
import { openEditor } from './editor.js';
import { isScan, planExplanation, planSummary } from './plan.js';
import { attempt, status, succeeded } from './session.js';
import { transferControls } from './transfer.js';

interface Sort {
  readonly column: string;
  readonly descending: boolean;
}

export function showBrowser(root: HTMLElement, credentials: Credentials, table: string): void {
  let query: Query = { filter: '', select: '', top: '20' };
  /** tokens[i] starts page i; page 0 starts at the beginning. */
  let tokens: (Continuation | undefined)[] = [undefined];
  let pageIndex = 0;
  let page: EntityPage | undefined;
  let sort: Sort | undefined;
  const hidden = new Set<string>();

  const form = queryForm((next) => {
    query = next;
    tokens = [undefined];
    void load(0);
  });
  const planLine = h('p', { id: 'plan', class: 'plan' });
  const planNote = h('p', { id: 'plan-note', class: 'plan-note' });
  const pageLabel = h('span', { id: 'page-label' });
  const first = h('button', { type: 'button', id: 'page-first', onclick: () => void load(0) }, '« First');
  const previous = h(
    'button',
    { type: 'button', id: 'page-previous', onclick: () => void load(pageIndex - 1) },
    '◀ Previous',
  );
  const next = h('button', { type: 'button', id: 'page-next', onclick: () => void load(pageIndex + 1) }, 'Next ▶');
  const chooser = h('div', { class: 'chooser-list' });
  const grid = h('div', { class: 'grid-wrap', id: 'grid-wrap' });
  const names = h('datalist', { id: 'property-names' });

  const reload = (): Promise<void> => load(pageIndex);
  const transfer = transferControls(
    credentials,
    table,
    () => query,
    () => page?.entities ?? [],
    reload,
  );

  replace(
    root,
    form.element,
    h(
      'div',
      { class: 'toolbar row wrap' },
      h(
        'button',
        {
          type: 'button',
          id: 'add-entity',
          class: 'primary',
          onclick: () => void openEditor(credentials, table, undefined, reload),
        },
        '+ Add entity',
      ),
      h('details', { class: 'chooser' }, h('summary', { id: 'columns-button' }, 'Columns'), chooser),
      transfer,
    ),
    h('div', { class: 'row wrap pager' }, first, previous, pageLabel, next),
    planLine,
    planNote,
    grid,
    names,
  );

  async function load(index: number): Promise<void> {
    if (index < 0 || index >= tokens.length) return;
    status(`${table}: loading page ${index + 1}…`);
    const result = await attempt(() => queryEntities(credentials, table, query, tokens[index]));
    if (result === undefined) return;
    page = result;
    pageIndex = index;
    tokens = tokens.slice(0, index + 1);
    if (result.continuation !== undefined) tokens.push(result.continuation);
    first.disabled = previous.disabled = index === 0;
    next.disabled = result.continuation === undefined;
    pageLabel.textContent = `page ${index + 1} · ${result.entities.length} entit${result.entities.length === 1 ? 'y' : 'ies'}${result.continuation ? ' · more follow' : ''}`;
    planLine.textContent = planSummary(result.plan, result.elapsedMs);
    planLine.classList.toggle('costly', isScan(result.plan));
    planNote.textContent = planExplanation(result.plan);
    status(`${table}: page ${index + 1} loaded.`);
    render();
  }

  function render(): void {
    if (page === undefined) return;
    const columns = propertyColumns(page.entities);
    replace(
      names,
      ['PartitionKey', 'RowKey', 'Timestamp', ...columns].map((name) => h('option', { value: name })),
    );
    replace(
      chooser,
      ['Timestamp', ...columns].map((name) => {
        const box = h('input', { type: 'checkbox', checked: !hidden.has(name), 'data-column': name });
        box.addEventListener('change', () => {
          if (box.checked) hidden.delete(name);
          else hidden.add(name);
          render();
        });
        return h('label', { class: 'check' }, box, name);
      }),
    );
    const shown = ['PartitionKey', 'RowKey', 'Timestamp', ...columns].filter((name) => !hidden.has(name));
    const entities = sorted(page.entities, sort);
    const header = h(
      'tr',
      {},
      h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'actions')),
      shown.map((name) => {
        const mark = sort?.column === name ? (sort.descending ? ' ▼' : ' ▲') : '';
        return h(
          'th',
          {
            scope: 'col',
            'aria-sort': sort?.column === name ? (sort.descending ? 'descending' : 'ascending') : undefined,
          },
          h(
            'button',
            {
              type: 'button',
              class: 'sort',
              'data-column': name,
              onclick: () => {
                sort = { column: name, descending: sort?.column === name && !sort.descending };
                render();
              },
            },
            name,
            mark,
          ),
        );
      }),
    );
    const body = entities.map((entity) =>
      h(
        'tr',
        { 'data-pk': entity.partitionKey, 'data-rk': entity.rowKey },
        h(
          'td',
          { class: 'actions' },
          h(
            'button',
            {
              type: 'button',
              class: 'edit',
              'aria-label': `Edit ${entity.partitionKey} / ${entity.rowKey}`,
              onclick: () => void openEditor(credentials, table, entity, reload),
            },
            'Edit',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'delete danger',
              'aria-label': `Delete ${entity.partitionKey} / ${entity.rowKey}`,
              onclick: () => void remove(entity),
            },
            'Delete',
          ),
        ),
        shown.map((name) => cell(entity, name)),
      ),
    );
    replace(
      grid,
      entities.length === 0
        ? h('p', { class: 'hint', id: 'no-entities' }, 'No entities on this page.')
        : h('table', { id: 'grid' }, h('thead', {}, header), h('tbody', {}, body)),
    );
    pinKeyColumns(grid);
  }

  async function remove(entity: Entity): Promise<void> {
    if (!confirm(`Delete entity PartitionKey '${entity.partitionKey}', RowKey '${entity.rowKey}'?`)) return;
    const done = await succeeded(() =>
      deleteEntity(credentials, table, entity.partitionKey, entity.rowKey, entity.etag || '*'),
    );
    if (!done) return;
    status('Entity deleted.');
    await reload();
  }

  void load(0);
}

/** Custom property names in the order they first appear on the page. */
function propertyColumns(entities: readonly Entity[]): string[] {
  const names = new Set<string>();
  for (const entity of entities) for (const name of entity.properties.keys()) names.add(name);
  return [...names];
}

function cellProperty(entity: Entity, name: string): Property | undefined {
  if (name === 'PartitionKey') return { type: 'Edm.String', text: entity.partitionKey };
  if (name === 'RowKey') return { type: 'Edm.String', text: entity.rowKey };
  if (name === 'Timestamp')
    return entity.timestamp === '' ? undefined : { type: 'Edm.DateTime', text: entity.timestamp };
  return entity.properties.get(name);
}

/**
 * Keys stay visible: the actions, PartitionKey and RowKey columns stick to the left edge when the
 * grid scrolls sideways, each offset by the widths of the ones before it (known only once laid out).
 */
function pinKeyColumns(grid: HTMLElement): void {
  const table = grid.querySelector('table');
  if (table === null) return;
  const headers = [...table.querySelectorAll<HTMLTableCellElement>('thead th')].slice(0, 3);
  let leftPx = 0;
  headers.forEach((header, column) => {
    for (const row of table.rows) {
      const cellElement = row.cells[column];
      if (cellElement === undefined) continue;
      cellElement.classList.add('pinned');
      cellElement.style.left = `${leftPx}px`;
    }
    leftPx += header.offsetWidth;
  });
}

function cell(entity: Entity, name: string): HTMLElement {
  const property = cellProperty(entity, name);
  if (property === undefined) return h('td', { class: 'absent', 'data-column': name });
  return h(
    'td',
    { 'data-column': name, 'data-type': property.type, title: property.text },
    h('span', { class: 'value' }, property.text),
    h('span', { class: 'type' }, shortType(property.type)),
  );
}

function sorted(entities: readonly Entity[], sort: Sort | undefined): Entity[] {
  if (sort === undefined) return [...entities];
  const direction = sort.descending ? -1 : 1;
  return [...entities].sort((a, b) => {
    const left = cellProperty(a, sort.column);
    const right = cellProperty(b, sort.column);
    if (left === undefined || right === undefined) return left === right ? 0 : left === undefined ? 1 : -1;
    return direction * compareValues(left, right);
  });
}

function compareValues(left: Property, right: Property): number {
  if (left.type === right.type) {
    switch (left.type) {
      case 'Edm.Int32':
      case 'Edm.Double':
        return Number(left.text) - Number(right.text) || 0;
      case 'Edm.Int64': {
        const difference = BigInt(left.text) - BigInt(right.text);
        return difference < 0n ? -1 : difference > 0n ? 1 : 0;
      }
    }
  }
  return left.text < right.text ? -1 : left.text > right.text ? 1 : 0;
}
