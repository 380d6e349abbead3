// The query form: builder rows (PartitionKey, RowKey, Timestamp or any property; a comparison; a
// typed literal), joined by and/or, Timestamp presets, and the raw $filter, $select and $top that
// the query actually sends. The builder writes the raw $filter; the user may edit it after.
import type { Query } from './api.js';
import { h, field, replace } from './dom.js';
import { edmTypes, shortType, type EdmType } from './edm.js';
import {
  comparisons,
  filterText,
  timestampPresets,
  timestampSince,
  type Comparison,
  type Condition,
} from './filter.js';
import { errorMessage } from './session.js';

export interface QueryForm {
  readonly element: HTMLElement;
  query(): Query;
  /** Fills the raw fields with `query` and runs it. */
  run(query: Query): void;
}

/** Small enough to come at once, large enough to scroll through (a page may be 1,000). */
const pageSizeDefault = '100';

export function queryForm(onRun: (query: Query) => void): QueryForm {
  const fields = queryFields();
  const { filterBox, selectBox, topBox } = fields;
  const query = (): Query => ({ filter: filterBox.value, select: selectBox.value, top: topBox.value });
  const run = (): void => onRun(query());
  const element = h(
    'details',
    { class: 'query', open: true },
    h('summary', {}, 'Query'),
    h(
      'form',
      {
        id: 'query-form',
        onsubmit: (event: Event) => {
          event.preventDefault();
          run();
        },
      },
      builderSection(fields, run),
      field('$filter', filterBox),
      h(
        'div',
        { class: 'row wrap' },
        field('$select', selectBox, 'comma-separated names'),
        field('$top (page size)', topBox),
      ),
      runButtons(fields, run),
    ),
  );
  const runGiven = (given: Query): void => {
    [filterBox.value, selectBox.value, topBox.value] = [given.filter, given.select, given.top];
    run();
  };
  return { element, query, run: runGiven };
}

/** The form's inputs: the builder rows, the raw $filter, $select and $top, and the builder's error line. */
interface QueryFields {
  readonly rows: HTMLElement;
  readonly filterBox: HTMLTextAreaElement;
  readonly selectBox: HTMLInputElement;
  readonly topBox: HTMLInputElement;
  readonly builderError: HTMLElement;
}

function queryFields(): QueryFields {
  return {
    rows: h('div', { class: 'conditions' }),
    filterBox: h('textarea', {
      id: 'filter',
      rows: 2,
      spellcheck: 'false',
      placeholder: "e.g. PartitionKey eq 'a' and Count gt 5",
    }),
    selectBox: h('input', { id: 'select', spellcheck: 'false', placeholder: 'all properties' }),
    topBox: h('input', { id: 'top', type: 'number', min: 1, max: 1000, value: pageSizeDefault }),
    builderError: h('p', { class: 'error', id: 'builder-error', role: 'alert' }),
  };
}

/** Writes the builder rows into the raw $filter; on an invalid row shows why and returns false. */
function applyBuilder(fields: QueryFields): boolean {
  try {
    fields.filterBox.value = filterText(readConditions(fields.rows));
    fields.builderError.textContent = '';
    return true;
  } catch (error) {
    fields.builderError.textContent = errorMessage(error);
    return false;
  }
}

/** The builder: its rows, error line, "+ condition", "Build filter & run" and the Timestamp presets. */
function builderSection(fields: QueryFields, run: () => void): HTMLElement {
  const addRow = (initial?: Condition): void => void fields.rows.appendChild(conditionRow(initial));
  const presets = timestampPresets.map((preset) =>
    h(
      'button',
      {
        type: 'button',
        onclick: () => {
          addRow(timestampSince(preset.ms, Date.now()));
          if (applyBuilder(fields)) run();
        },
      },
      `Timestamp: ${preset.label}`,
    ),
  );
  return h(
    'div',
    { class: 'builder' },
    fields.rows,
    fields.builderError,
    h(
      'div',
      { class: 'row wrap' },
      h('button', { type: 'button', id: 'add-condition', onclick: () => addRow() }, '+ condition'),
      h(
        'button',
        {
          type: 'button',
          id: 'apply-builder',
          onclick: () => {
            if (applyBuilder(fields)) run();
          },
        },
        'Build filter & run',
      ),
      presets,
    ),
  );
}

/** "Run query" (the form's submit) and "Clear", which empties every field and runs. */
function runButtons(fields: QueryFields, run: () => void): HTMLElement {
  return h(
    'div',
    { class: 'row wrap' },
    h('button', { type: 'submit', id: 'run-query', class: 'primary' }, 'Run query'),
    h(
      'button',
      {
        type: 'button',
        id: 'clear-query',
        onclick: () => {
          replace(fields.rows);
          fields.filterBox.value = '';
          fields.selectBox.value = '';
          fields.topBox.value = pageSizeDefault;
          run();
        },
      },
      'Clear',
    ),
  );
}

/** One builder row: and/or, property, comparison, type, value, and a remove button. */
function conditionRow(initial?: Condition): HTMLElement {
  const join = h(
    'select',
    { 'aria-label': 'join', class: 'join' },
    h('option', { value: 'and' }, 'and'),
    h('option', { value: 'or' }, 'or'),
  );
  const property = h('input', {
    'aria-label': 'property',
    class: 'property',
    list: 'property-names',
    value: initial?.property ?? 'PartitionKey',
    spellcheck: 'false',
  });
  const comparison = h(
    'select',
    { 'aria-label': 'comparison', class: 'comparison' },
    comparisons.map((op) => h('option', { value: op }, op)),
  );
  const type = h(
    'select',
    { 'aria-label': 'type', class: 'type' },
    edmTypes.map((t) => h('option', { value: t }, shortType(t))),
  );
  const value = h('input', { 'aria-label': 'value', class: 'value', spellcheck: 'false', value: initial?.value ?? '' });
  join.value = initial?.join ?? 'and';
  comparison.value = initial?.comparison ?? 'eq';
  type.value = initial?.type ?? 'Edm.String';
  // Keys are strings and Timestamp a DateTime: the type follows the property when it is one of them.
  property.addEventListener('change', () => {
    if (property.value === 'Timestamp') type.value = 'Edm.DateTime';
    else if (property.value === 'PartitionKey' || property.value === 'RowKey') type.value = 'Edm.String';
  });
  const row = h(
    'div',
    { class: 'condition' },
    join,
    property,
    comparison,
    type,
    value,
    h('button', { type: 'button', class: 'icon', 'aria-label': 'remove condition', onclick: () => row.remove() }, '×'),
  );
  return row;
}

/** The conditions of the builder rows, as typed. */
function readConditions(rows: HTMLElement): Condition[] {
  return [...rows.querySelectorAll('.condition')].map((row) => ({
    join: (row.querySelector('.join') as HTMLSelectElement).value as 'and' | 'or',
    property: (row.querySelector('.property') as HTMLInputElement).value.trim(),
    comparison: (row.querySelector('.comparison') as HTMLSelectElement).value as Comparison,
    type: (row.querySelector('.type') as HTMLSelectElement).value as EdmType,
    value: (row.querySelector('.value') as HTMLInputElement).value,
  }));
}
