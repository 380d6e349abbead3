// One table's entities: the query form, a page of results in a grid (union of the page's
// properties, EDM type in every cell, column chooser, sort within the page), paging by
// continuation tokens (first, previous, next), the server's query plan, and row actions.
import { deleteEntity, queryEntities, tableInsights, type Continuation, type Credentials, type EntityPage, type Query } from './api.js';
import { queryForm } from './builder.js';
import { h, replace } from './dom.js';
import type { Entity, Property } from './edm.js';
import { openEditor } from './editor.js';
import { cellProperty, renderGrid } from './grid.js';
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
  const planLine = h('p', { id: 'plan', class: 'plan' });
  const planNote = h('p', { id: 'plan-note', class: 'plan-note' });
  const insightsBox = h('ul', { id: 'table-insights', class: 'insights', 'aria-label': 'design insights for this table' });
  const pageLabel = h('span', { id: 'page-label' });
  const first = h('button', { type: 'button', id: 'page-first', onclick: () => void load(0) }, '« First');
  const previous = h('button', { type: 'button', id: 'page-previous', onclick: () => void load(pageIndex - 1) }, '◀ Previous');
  const next = h('button', { type: 'button', id: 'page-next', onclick: () => void load(pageIndex + 1) }, 'Next ▶');
  const chooser = h('div', { class: 'chooser-list' });
  const grid = h('div', { class: 'grid-wrap', id: 'grid-wrap' });
  const names = h('datalist', { id: 'property-names' });

  const reload = (): Promise<void> => load(pageIndex);
  /** Rows ticked for deletion, by `pk/rk` (kept across scrolling: rows come and go in the grid). */
  const selected = new Map<string, Entity>();
  const deleteButton = h('button', { type: 'button', id: 'delete-selected', class: 'danger', disabled: true, onclick: async () => {
    if ((await deleteSelected(credentials, table, [...selected.values()])) > 0) await reload();
  } }, 'Delete selected');
  const selectionChanged = (): void => {
    deleteButton.disabled = selected.size === 0;
    deleteButton.textContent = selected.size === 0 ? 'Delete selected' : `Delete selected (${selected.size})`;
  };
  const transfer = transferControls(credentials, table, () => query, () => page?.entities ?? [], reload);

  replace(
    root,
    form.element,
    jumpControls((filter) => form.run({ filter, select: '', top: query.top })),
    h('div', { class: 'toolbar row wrap' },
      h('button', { type: 'button', id: 'add-entity', class: 'primary', onclick: () => void openEditor(credentials, table, undefined, reload) }, '+ Add entity'),
      deleteButton,
      h('button', { type: 'button', id: 'query-code', onclick: () => showQueryCode(table, credentials.account, query) }, 'Copy as code'),
      h('details', { class: 'chooser' }, h('summary', { id: 'columns-button' }, 'Columns'), chooser),
      transfer,
    ),
    h('div', { class: 'row wrap pager' }, first, previous, pageLabel, next),
    h('div', { class: 'plan-row' }, h('div', {}, planLine, planNote), insightsBox),
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
    selected.clear();
    selectionChanged();
    tokens = tokens.slice(0, index + 1);
    if (result.continuation !== undefined) tokens.push(result.continuation);
    first.disabled = previous.disabled = index === 0;
    next.disabled = result.continuation === undefined;
    pageLabel.textContent = `page ${index + 1} · ${result.entities.length} entit${result.entities.length === 1 ? 'y' : 'ies'}${result.continuation ? ' · more follow' : ''}`;
    planLine.textContent = planSummary(result.plan, result.elapsedMs);
    planLine.classList.toggle('costly', isScan(result.plan));
    planNote.textContent = planExplanation(result.plan);
    void showInsights();
    status(`${table}: page ${index + 1} loaded.`);
    const renderStartMs = performance.now();
    delete grid.dataset['renderMs'];
    render();
    // Until the frame after the grid was laid out and painted: what the user waits for.
    requestAnimationFrame(() => setTimeout(() => (grid.dataset['renderMs'] = (performance.now() - renderStartMs).toFixed(1))));
  }

  function render(): void {
    if (page === undefined) return;
    const columns = propertyColumns(page.entities);
    replace(names, ['PartitionKey', 'RowKey', 'Timestamp', ...columns].map((name) => h('option', { value: name })));
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
    const header = h('tr', {}, h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'actions')), shown.map((name) => {
      const mark = sort?.column === name ? (sort.descending ? ' ▼' : ' ▲') : '';
      return h('th', { scope: 'col', 'aria-sort': sort?.column === name ? (sort.descending ? 'descending' : 'ascending') : undefined },
        h('button', { type: 'button', class: 'sort', 'data-column': name, onclick: () => {
          sort = { column: name, descending: sort?.column === name && !sort.descending };
          render();
        } }, name, mark));
    }));
    if (entities.length === 0) {
      replace(grid, h('p', { class: 'hint', id: 'no-entities' }, 'No entities on this page.'));
      return;
    }
    renderGrid(grid, header, { entities, columns: shown, actions: (entity) => actionsCell(entity) });
  }

  function actionsCell(entity: Entity): HTMLElement {
    const key = `${entity.partitionKey}/${entity.rowKey}`;
    const box = h('input', { type: 'checkbox', class: 'select-row', 'aria-label': `Select ${entity.partitionKey} / ${entity.rowKey}`, checked: selected.has(key) });
    box.addEventListener('change', () => {
      if (box.checked) selected.set(key, entity);
      else selected.delete(key);
      selectionChanged();
    });
    return h('td', { class: 'actions' }, box,
      h('button', { type: 'button', class: 'json', 'aria-label': `JSON of ${entity.partitionKey} / ${entity.rowKey}`, onclick: () => showEntityJson(entity) }, '{}'),
      h('button', { type: 'button', class: 'edit', 'aria-label': `Edit ${entity.partitionKey} / ${entity.rowKey}`, onclick: () => void openEditor(credentials, table, entity, reload) }, 'Edit'),
      h('button', { type: 'button', class: 'delete danger', 'aria-label': `Delete ${entity.partitionKey} / ${entity.rowKey}`, onclick: () => void remove(entity) }, 'Delete'),
    );
  }

  /** The server's design insights for this table, beside the plan (the explorer's own paging is not counted). */
  async function showInsights(): Promise<void> {
    const findings = await tableInsights(credentials, table).catch(() => []);
    replace(insightsBox, findings.map((finding) => h('li', { 'data-kind': finding.kind, title: finding.pattern }, finding.summary)));
  }

  async function remove(entity: Entity): Promise<void> {
    if (!confirm(`Delete entity PartitionKey '${entity.partitionKey}', RowKey '${entity.rowKey}'?`)) return;
    const done = await succeeded(() => deleteEntity(credentials, table, entity.partitionKey, entity.rowKey, entity.etag || '*'));
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
