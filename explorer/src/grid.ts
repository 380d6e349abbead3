// The entity grid, virtualized: a page may hold 1,000 entities of many properties, and building
// every cell took seconds. Only the rows in view (and a margin) are in the document; spacer rows
// stand for the rest, so the scroll bar is true. Every row is one line of a fixed height (values
// cut with an ellipsis; the full text is in the cell's title and the editor), and column widths
// come from the data, not from layout, so nothing is measured while rendering or scrolling.
import { h, replace } from './dom.js';
import { shortType, type Entity, type Property } from './edm.js';

/** One line per row: keep in step with `#grid tbody tr` in style.css. */
export const rowHeightPx = 30;
/** Rows rendered above and below the visible ones, so fast scrolling shows no blank. */
const overscanRows = 15;
const charWidthPx = 7.5;
const cellPaddingPx = 18;
const columnCharsMin = 6;
const columnCharsMax = 40;
const actionsWidthPx = 190;

export interface GridColumns {
  readonly names: readonly string[];
  /** Header cells, actions first (built by the caller: sort buttons and their state). */
  readonly header: HTMLElement;
}

export interface GridRows {
  readonly entities: readonly Entity[];
  readonly columns: readonly string[];
  /** The actions cell of a row (edit, delete, select). */
  actions(entity: Entity): HTMLElement;
}

/** Fills `wrap` (the scrolling element) with the grid of `rows`, and redraws the rows in view on scroll. */
export function renderGrid(wrap: HTMLElement, header: HTMLElement, rows: GridRows): void {
  if (rows.entities.length === 0) {
    wrap.onscroll = null;
    replace(wrap, h('p', { class: 'hint', id: 'no-entities' }, 'No entities on this page.'));
    return;
  }
  const widths = [actionsWidthPx, ...rows.columns.map((name) => columnWidthPx(name, rows.entities))];
  const body = h('tbody', {});
  // Sizes through the CSSOM: the page's Content-Security-Policy refuses style attributes.
  const colgroup = h(
    'colgroup',
    {},
    widths.map((width) => sized(h('col', {}), 'width', width)),
  );
  const table = sized(
    h('table', { id: 'grid' }, colgroup, h('thead', {}, header), body),
    'width',
    widths.reduce((a, b) => a + b, 0),
  );
  pinKeyColumns(header, widths);
  let shown = '';
  const draw = (): void => {
    const viewPx = wrap.clientHeight || window.innerHeight;
    const first = Math.max(0, Math.floor(wrap.scrollTop / rowHeightPx) - overscanRows);
    const last = Math.min(rows.entities.length, Math.ceil((wrap.scrollTop + viewPx) / rowHeightPx) + overscanRows);
    if (`${first}:${last}` === shown) return;
    shown = `${first}:${last}`;
    const visible = rows.entities.slice(first, last).map((entity, offset) => row(entity, first + offset, rows, widths));
    replace(
      body,
      spacer(first, rows.columns.length),
      visible,
      spacer(rows.entities.length - last, rows.columns.length),
    );
  };
  replace(wrap, table);
  draw();
  wrap.onscroll = () => requestAnimationFrame(draw);
}

/**
 * Runs `render` and records on `wrap` (data-render-ms) the time until the frame after the grid was
 * laid out and painted: what the user waits for once the answer is in.
 */
export function renderTimed(wrap: HTMLElement, render: () => void): void {
  const startMs = performance.now();
  delete wrap.dataset['renderMs'];
  render();
  requestAnimationFrame(() => setTimeout(() => (wrap.dataset['renderMs'] = (performance.now() - startMs).toFixed(1))));
}

function row(entity: Entity, index: number, rows: GridRows, widths: readonly number[]): HTMLElement {
  const element = h(
    'tr',
    { 'data-pk': entity.partitionKey, 'data-rk': entity.rowKey, class: index % 2 === 1 ? 'alt' : undefined },
    rows.actions(entity),
    rows.columns.map((name) => cell(entity, name)),
  );
  pinCells(element, widths);
  return element;
}

/** Stands for `count` rows that are not in the document (nothing when there are none). */
function spacer(count: number, columns: number): HTMLElement | null {
  if (count === 0) return null;
  return sized(
    h('tr', { class: 'spacer', 'aria-hidden': 'true' }, h('td', { colspan: columns + 1 })),
    'height',
    count * rowHeightPx,
  );
}

function sized<T extends HTMLElement>(element: T, property: 'width' | 'height', px: number): T {
  element.style[property] = `${px}px`;
  return element;
}

export function cellProperty(entity: Entity, name: string): Property | undefined {
  if (name === 'PartitionKey') return { type: 'Edm.String', text: entity.partitionKey };
  if (name === 'RowKey') return { type: 'Edm.String', text: entity.rowKey };
  if (name === 'Timestamp')
    return entity.timestamp === '' ? undefined : { type: 'Edm.DateTime', text: entity.timestamp };
  return entity.properties.get(name);
}

function cell(entity: Entity, name: string): HTMLElement {
  const property = cellProperty(entity, name);
  if (property === undefined) return h('td', { class: 'absent', 'data-column': name });
  // One line: a line break in a value shows as ⏎ (the title and the editor hold the text itself).
  return h(
    'td',
    { 'data-column': name, 'data-type': property.type, title: property.text },
    h('span', { class: 'value' }, property.text.replace(/\r?\n/g, ' ⏎ ')),
    h('span', { class: 'type' }, shortType(property.type)),
  );
}

/** Wide enough for the header and most values (a sample of the page), within bounds. */
function columnWidthPx(name: string, entities: readonly Entity[]): number {
  let chars = name.length + 2;
  const step = Math.max(1, Math.floor(entities.length / 200));
  for (let i = 0; i < entities.length; i += step) {
    const property = cellProperty(entities[i]!, name);
    if (property !== undefined) chars = Math.max(chars, property.text.length + shortType(property.type).length + 2);
  }
  return Math.round(Math.min(columnCharsMax, Math.max(columnCharsMin, chars)) * charWidthPx + cellPaddingPx);
}

/**
 * Keys stay visible: the actions, PartitionKey and RowKey columns stick to the left edge when the
 * grid scrolls sideways, each offset by the widths of the ones before it (known from the colgroup).
 */
function pinKeyColumns(header: HTMLElement, widths: readonly number[]): void {
  pinCells(header, widths);
}

function pinCells(tableRow: HTMLElement, widths: readonly number[]): void {
  let leftPx = 0;
  for (let column = 0; column < 3 && column < tableRow.children.length; column++) {
    const element = tableRow.children[column] as HTMLElement;
    element.classList.add('pinned');
    element.style.left = `${leftPx}px`;
    leftPx += widths[column]!;
  }
}
