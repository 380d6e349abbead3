// One table's entities: the query form, a page of results in a grid (union of the page's
// properties, EDM type in every cell, column chooser, sort within the page), paging by
// continuation tokens (first, previous, next), the server's query plan, and row actions.
import {
  deleteEntity,
  queryEntities,
  tableInsights,
  type Continuation,
  type Credentials,
  type EntityPage,
  type Query,
} from './api.js';
import { queryForm } from './builder.js';
import { h, replace } from './dom.js';
import type { Entity, Property } from './edm.js';
import { openEditor } from './editor.js';
import { cellProperty, renderGrid, renderTimed } from './grid.js';
import { isScan, planExplanation, planSummary } from './plan.js';
import { attempt, status, succeeded } from './session.js';
import { deleteSelected, jumpControls, showEntityJson, showQueryCode } from './table-tools.js';
import { transferControls } from './transfer.js';

interface Sort {
  readonly column: string;
  readonly descending: boolean;
}

export function showBrowser(root: HTMLElement, credentials: Credentials, table: string): void {
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
  let query: Query = form.query();
  const plan = planArea(credentials, table);
  const pager = pagerControls((step) => void load(step === 'first' ? 0 : pageIndex + (step === 'next' ? 1 : -1)));
  const chooser = h('div', { class: 'chooser-list' });
  const grid = h('div', { class: 'grid-wrap', id: 'grid-wrap' });
  const names = h('datalist', { id: 'property-names' });
  const reload = (): Promise<void> => load(pageIndex);
  const pageEntities = (): readonly Entity[] => page?.entities ?? [];
  const selection = new Selection(async (entities) => {
    if ((await deleteSelected(credentials, table, entities)) > 0) await reload();
  });
  replace(
    root,
    form.element,
    jumpControls((filter) => form.run({ filter, select: '', top: query.top })),
    toolbar(credentials, table, selection, chooser, () => query, pageEntities, reload),
    pager.element,
    plan.element,
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
    selection.clear();
    tokens = tokens.slice(0, index + 1);
    if (result.continuation !== undefined) tokens.push(result.continuation);
    pager.show(index, result);
    plan.show(result);
    status(`${table}: page ${index + 1} loaded.`);
    renderTimed(grid, render);
  }

  function render(): void {
    if (page === undefined) return;
    const shown = shownColumns(page.entities, names, chooser, hidden, render);
    const entities = sorted(page.entities, sort);
    const header = gridHeader(shown, sort, (column) => {
      sort = { column, descending: sort?.column === column && !sort.descending };
      render();
    });
    renderGrid(grid, header, {
      entities,
      columns: shown,
      actions: (entity) => rowActions(entity, selection, credentials, table, reload),
    });
  }

  void load(0);
}

/** The row of actions above the grid: add, delete selected, copy as code, columns, export and import. */
function toolbar(
  credentials: Credentials,
  table: string,
  selection: Selection,
  chooser: HTMLElement,
  currentQuery: () => Query,
  pageEntities: () => readonly Entity[],
  reload: () => Promise<void>,
): HTMLElement {
  return h(
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
    selection.button,
    h(
      'button',
      { type: 'button', id: 'query-code', onclick: () => showQueryCode(table, credentials.account, currentQuery()) },
      'Copy as code',
    ),
    h('details', { class: 'chooser' }, h('summary', { id: 'columns-button' }, 'Columns'), chooser),
    transferControls(credentials, table, currentQuery, pageEntities, reload),
  );
}

/**
 * The page's columns (keys and Timestamp first) offered as property names and in the column chooser;
 * returns those not hidden.
 */
function shownColumns(
  entities: readonly Entity[],
  names: HTMLElement,
  chooser: HTMLElement,
  hidden: Set<string>,
  render: () => void,
): string[] {
  const columns = ['PartitionKey', 'RowKey', 'Timestamp', ...propertyColumns(entities)];
  replace(
    names,
    columns.map((name) => h('option', { value: name })),
  );
  fillChooser(chooser, columns.slice(2), hidden, render);
  return columns.filter((name) => !hidden.has(name));
}

/** Rows ticked for deletion, by `pk/rk` (kept across scrolling: rows come and go in the grid). */
class Selection {
  readonly entities = new Map<string, Entity>();
  readonly button: HTMLButtonElement;

  constructor(onDelete: (entities: Entity[]) => Promise<void>) {
    this.button = h(
      'button',
      {
        type: 'button',
        id: 'delete-selected',
        class: 'danger',
        disabled: true,
        onclick: () => void onDelete([...this.entities.values()]),
      },
      'Delete selected',
    );
  }

  set(key: string, entity: Entity, ticked: boolean): void {
    if (ticked) this.entities.set(key, entity);
    else this.entities.delete(key);
    this.changed();
  }

  clear(): void {
    this.entities.clear();
    this.changed();
  }

  private changed(): void {
    this.button.disabled = this.entities.size === 0;
    this.button.textContent = this.entities.size === 0 ? 'Delete selected' : `Delete selected (${this.entities.size})`;
  }
}

function rowActions(
  entity: Entity,
  selection: Selection,
  credentials: Credentials,
  table: string,
  reload: () => Promise<void>,
): HTMLElement {
  const key = `${entity.partitionKey}/${entity.rowKey}`;
  const label = `${entity.partitionKey} / ${entity.rowKey}`;
  const box = h('input', {
    type: 'checkbox',
    class: 'select-row',
    'aria-label': `Select ${label}`,
    checked: selection.entities.has(key),
  });
  box.addEventListener('change', () => selection.set(key, entity, box.checked));
  return h(
    'td',
    { class: 'actions' },
    box,
    h(
      'button',
      { type: 'button', class: 'json', 'aria-label': `JSON of ${label}`, onclick: () => showEntityJson(entity) },
      '{}',
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'edit',
        'aria-label': `Edit ${label}`,
        onclick: () => void openEditor(credentials, table, entity, reload),
      },
      'Edit',
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'delete danger',
        'aria-label': `Delete ${label}`,
        onclick: () => void removeEntity(entity, credentials, table, reload),
      },
      'Delete',
    ),
  );
}

async function removeEntity(
  entity: Entity,
  credentials: Credentials,
  table: string,
  reload: () => Promise<void>,
): Promise<void> {
  if (!confirm(`Delete entity PartitionKey '${entity.partitionKey}', RowKey '${entity.rowKey}'?`)) return;
  const done = await succeeded(() =>
    deleteEntity(credentials, table, entity.partitionKey, entity.rowKey, entity.etag || '*'),
  );
  if (!done) return;
  status('Entity deleted.');
  await reload();
}

/** The query plan of the page, and the server's design insights for the table beside it. */
function planArea(credentials: Credentials, table: string): { element: HTMLElement; show(page: EntityPage): void } {
  const line = h('p', { id: 'plan', class: 'plan' });
  const note = h('p', { id: 'plan-note', class: 'plan-note' });
  const insights = h('ul', { id: 'table-insights', class: 'insights', 'aria-label': 'design insights for this table' });
  const show = (page: EntityPage): void => {
    line.textContent = planSummary(page.plan, page.elapsedMs);
    line.classList.toggle('costly', isScan(page.plan));
    note.textContent = planExplanation(page.plan);
    // The explorer's own paging is not counted by the server's insights.
    void tableInsights(credentials, table)
      .catch(() => [])
      .then((findings) =>
        replace(
          insights,
          findings.map((finding) => h('li', { 'data-kind': finding.kind, title: finding.pattern }, finding.summary)),
        ),
      );
  };
  return { element: h('div', { class: 'plan-row' }, h('div', {}, line, note), insights), show };
}

/** First, previous, next, and what the page holds. */
function pagerControls(onStep: (step: 'first' | 'previous' | 'next') => void): {
  element: HTMLElement;
  show(index: number, page: EntityPage): void;
} {
  const label = h('span', { id: 'page-label' });
  const first = h('button', { type: 'button', id: 'page-first', onclick: () => onStep('first') }, '« First');
  const previous = h(
    'button',
    { type: 'button', id: 'page-previous', onclick: () => onStep('previous') },
    '◀ Previous',
  );
  const next = h('button', { type: 'button', id: 'page-next', onclick: () => onStep('next') }, 'Next ▶');
  const show = (index: number, page: EntityPage): void => {
    first.disabled = previous.disabled = index === 0;
    next.disabled = page.continuation === undefined;
    const count = page.entities.length;
    label.textContent = `page ${index + 1} · ${count} entit${count === 1 ? 'y' : 'ies'}${page.continuation ? ' · more follow' : ''}`;
  };
  return { element: h('div', { class: 'row wrap pager' }, first, previous, label, next), show };
}

/** The column chooser: a box per column that can be hidden. */
function fillChooser(
  chooser: HTMLElement,
  columns: readonly string[],
  hidden: Set<string>,
  onChange: () => void,
): void {
  replace(
    chooser,
    columns.map((name) => {
      const box = h('input', { type: 'checkbox', checked: !hidden.has(name), 'data-column': name });
      box.addEventListener('change', () => {
        if (box.checked) hidden.delete(name);
        else hidden.add(name);
        onChange();
      });
      return h('label', { class: 'check' }, box, name);
    }),
  );
}

/** The header row: the actions column, then a sort button per column, marked with the sort. */
function gridHeader(shown: readonly string[], sort: Sort | undefined, onSort: (column: string) => void): HTMLElement {
  return h(
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
        h('button', { type: 'button', class: 'sort', 'data-column': name, onclick: () => onSort(name) }, name, mark),
      );
    }),
  );
}

/** Custom property names in the order they first appear on the page. */
function propertyColumns(entities: readonly Entity[]): string[] {
  const names = new Set<string>();
  for (const entity of entities) for (const name of entity.properties.keys()) names.add(name);
  return [...names];
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
