// The entity editor (a modal dialog): keys, then one row per property with its name, EDM type and
// value, each validated before anything is sent. Edits are sent with the entity's ETag in If-Match,
// so if someone changed it meanwhile the service answers 412 and the editor offers to reload it:
// nothing is overwritten silently.
import { ApiError, getEntity, writeEntity, type Credentials, type WriteMode } from './api.js';
import { byId, h, replace } from './dom.js';
import {
  edmTypes,
  entityToWire,
  invalidReason,
  propertyNameReason,
  shortType,
  type EdmType,
  type Entity,
  type Property,
} from './edm.js';
import { attempt, errorMessage, status } from './session.js';

/** Opens the editor for a new entity, or for the current version of the entity with these keys. */
export async function openEditor(
  credentials: Credentials,
  table: string,
  keys: { partitionKey: string; rowKey: string } | undefined,
  onSaved: () => Promise<void>,
): Promise<void> {
  let entity: Entity | undefined;
  if (keys !== undefined) {
    entity = await attempt(() => getEntity(credentials, table, keys.partitionKey, keys.rowKey));
    if (entity === undefined) return;
  }
  const session: EditorSession = {
    credentials,
    table,
    entity,
    etag: entity?.etag ?? '',
    dialog: byId<HTMLDialogElement>('dialog'),
    fields: editorFields(entity !== undefined),
    onSaved,
  };
  const { partitionKey, rows } = session.fields;
  fill(session.fields, entity);
  replace(session.dialog, editorForm(session));
  session.dialog.showModal();
  (entity === undefined
    ? partitionKey
    : ((rows.querySelector('.prop-value') as HTMLElement | null) ?? partitionKey)
  ).focus();
}

/** One open editor: where it writes, the entity as opened, and its form. */
interface EditorSession {
  readonly credentials: Credentials;
  readonly table: string;
  /** The entity as opened; undefined when adding one. */
  readonly entity: Entity | undefined;
  /** Sent in If-Match; a reload takes the current version's. */
  etag: string;
  readonly dialog: HTMLDialogElement;
  readonly fields: EditorFields;
  readonly onSaved: () => Promise<void>;
}

interface EditorFields {
  readonly partitionKey: HTMLInputElement;
  readonly rowKey: HTMLInputElement;
  readonly rows: HTMLElement;
  readonly message: HTMLElement;
  readonly modeSelect: HTMLSelectElement;
}

/** The editor's inputs; the keys are read-only when editing an existing entity. */
function editorFields(existing: boolean): EditorFields {
  return {
    partitionKey: h('input', { id: 'edit-pk', spellcheck: 'false', readonly: existing }),
    rowKey: h('input', { id: 'edit-rk', spellcheck: 'false', readonly: existing }),
    rows: h('div', { class: 'property-rows', id: 'edit-properties' }),
    message: h('div', { id: 'edit-message', class: 'error', role: 'alert' }),
    modeSelect: h(
      'select',
      { id: 'edit-mode' },
      h('option', { value: 'replace' }, 'Replace (the entity becomes exactly this)'),
      h('option', { value: 'merge' }, 'Merge (only these properties change)'),
    ),
  };
}

/** Shows `source`'s keys and properties in the form (empty for a new entity). */
function fill(fields: EditorFields, source: Entity | undefined): void {
  fields.partitionKey.value = source?.partitionKey ?? '';
  fields.rowKey.value = source?.rowKey ?? '';
  replace(fields.rows);
  for (const [name, property] of source?.properties ?? []) fields.rows.appendChild(propertyRow(name, property));
}

/** The dialog's form: heading, keys, update mode (when editing), property rows, message and buttons. */
function editorForm(session: EditorSession): HTMLElement {
  const { entity, table, dialog } = session;
  const { partitionKey, rowKey, rows, message, modeSelect } = session.fields;
  return h(
    'form',
    {
      method: 'dialog',
      class: 'editor',
      onsubmit: (event: Event) => {
        event.preventDefault();
        void save(session);
      },
    },
    h('h3', {}, entity === undefined ? `Add entity to ${table}` : `Edit entity in ${table}`),
    h(
      'div',
      { class: 'row wrap' },
      h('div', { class: 'field' }, h('label', { for: 'edit-pk' }, 'PartitionKey'), partitionKey),
      h('div', { class: 'field' }, h('label', { for: 'edit-rk' }, 'RowKey'), rowKey),
    ),
    entity === undefined ? null : h('div', { class: 'field' }, h('label', { for: 'edit-mode' }, 'Update'), modeSelect),
    h(
      'div',
      { class: 'property-head', 'aria-hidden': 'true' },
      h('span', {}, 'name'),
      h('span', {}, 'type'),
      h('span', {}, 'value'),
    ),
    rows,
    h('button', { type: 'button', id: 'add-property', onclick: () => rows.appendChild(propertyRow()) }, '+ property'),
    message,
    h(
      'div',
      { class: 'row end' },
      h('button', { type: 'button', id: 'edit-cancel', onclick: () => dialog.close() }, 'Cancel'),
      h('button', { type: 'submit', id: 'edit-save', class: 'primary' }, entity === undefined ? 'Insert' : 'Save'),
    ),
  );
}

/** One property row: name, EDM type, value and a remove button, validated as the user types. */
function propertyRow(name = '', property: Property = { type: 'Edm.String', text: '' }): HTMLElement {
  const nameInput = h('input', {
    class: 'prop-name',
    'aria-label': 'property name',
    spellcheck: 'false',
    value: name,
  });
  const typeSelect = h(
    'select',
    { class: 'prop-type', 'aria-label': 'type' },
    edmTypes.map((type) => h('option', { value: type }, shortType(type))),
  );
  typeSelect.value = property.type;
  const valueSlot = h('div', { class: 'prop-value-slot' });
  const rowError = h('small', { class: 'error prop-error' });
  const valueText = (): string => (valueSlot.querySelector('.prop-value') as HTMLInputElement).value;
  const validate = (): boolean => {
    const reason =
      propertyNameReason(nameInput.value.trim()) ?? invalidReason(typeSelect.value as EdmType, valueText());
    rowError.textContent = reason ?? '';
    return reason === undefined;
  };
  const setValueControl = (type: EdmType, text: string): void => replace(valueSlot, valueControl(type, text, validate));
  typeSelect.addEventListener('change', () => {
    setValueControl(typeSelect.value as EdmType, valueText());
    validate();
  });
  nameInput.addEventListener('input', validate);
  setValueControl(property.type, property.text);
  const row = h(
    'div',
    { class: 'property-row' },
    nameInput,
    typeSelect,
    valueSlot,
    h('button', { type: 'button', class: 'icon', 'aria-label': 'remove property', onclick: () => row.remove() }, '×'),
    rowError,
  );
  return row;
}

/** The value input for a type: true/false for Edm.Boolean, else a text area with the type's format as hint. */
function valueControl(type: EdmType, text: string, onInput: () => void): HTMLElement {
  const control =
    type === 'Edm.Boolean'
      ? h(
          'select',
          { class: 'prop-value', 'aria-label': 'value' },
          h('option', { value: 'true' }, 'true'),
          h('option', { value: 'false' }, 'false'),
        )
      : h('textarea', {
          class: 'prop-value',
          'aria-label': 'value',
          rows: 1,
          spellcheck: 'false',
          placeholder: placeholders[type],
        });
  control.value = type === 'Edm.Boolean' ? (text === 'true' ? 'true' : 'false') : text;
  control.addEventListener('input', onInput);
  return control;
}

/** The form's properties, or undefined after marking what is invalid. */
function collect(rows: HTMLElement): [string, Property][] | undefined {
  const properties: [string, Property][] = [];
  let valid = true;
  const seen = new Set<string>();
  for (const row of rows.querySelectorAll('.property-row')) {
    const name = (row.querySelector('.prop-name') as HTMLInputElement).value.trim();
    const type = (row.querySelector('.prop-type') as HTMLSelectElement).value as EdmType;
    const text = (row.querySelector('.prop-value') as HTMLInputElement).value;
    const reason =
      propertyNameReason(name) ?? (seen.has(name) ? `${name} appears twice` : undefined) ?? invalidReason(type, text);
    (row.querySelector('.prop-error') as HTMLElement).textContent = reason ?? '';
    if (reason !== undefined) valid = false;
    seen.add(name);
    properties.push([name, { type, text }]);
  }
  return valid ? properties : undefined;
}

/** Replaces the form with the entity as it is now (after a 412), discarding the edits. */
async function reload(session: EditorSession): Promise<void> {
  const { fields } = session;
  try {
    const fresh = await getEntity(session.credentials, session.table, fields.partitionKey.value, fields.rowKey.value);
    session.etag = fresh.etag;
    fill(fields, fresh);
    replace(fields.message, 'Reloaded the entity as it is now; your edits were discarded.');
    fields.message.className = 'info';
  } catch (error) {
    replace(fields.message, errorMessage(error));
  }
}

/** Validates and writes the entity with its ETag; on 412 offers to reload instead of overwriting. */
async function save(session: EditorSession): Promise<void> {
  const { entity, fields } = session;
  const { message } = fields;
  const properties = collect(fields.rows);
  if (properties === undefined) {
    replace(message, 'Fix the marked values first; nothing was sent.');
    message.className = 'error';
    return;
  }
  const mode: WriteMode = entity === undefined ? 'insert' : (fields.modeSelect.value as WriteMode);
  try {
    const wire = entityToWire(fields.partitionKey.value, fields.rowKey.value, properties);
    await writeEntity(session.credentials, session.table, wire, mode, session.etag);
  } catch (error) {
    message.className = 'error';
    if (error instanceof ApiError && error.status === 412) {
      replace(
        message,
        h(
          'p',
          {},
          'This entity was changed by someone else since you opened it (412 Precondition Failed). Nothing was written.',
        ),
        h(
          'button',
          { type: 'button', id: 'edit-reload', onclick: () => void reload(session) },
          'Reload the current version',
        ),
      );
    } else replace(message, errorMessage(error));
    return;
  }
  session.dialog.close();
  status(entity === undefined ? 'Entity added.' : `Entity saved (${mode}).`);
  await session.onSaved();
}

const placeholders: Record<EdmType, string> = {
  'Edm.String': 'text',
  'Edm.Int32': '-2147483648 to 2147483647',
  'Edm.Int64': 'whole number, up to 19 digits',
  'Edm.Double': '3.25, 1e-9, NaN, Infinity, -Infinity',
  'Edm.Boolean': '',
  'Edm.DateTime': '2024-05-01T12:30:00.1234567Z',
  'Edm.Guid': '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  'Edm.Binary': 'base64, e.g. AAEC/w==',
};
