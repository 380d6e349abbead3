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
  const dialog = byId<HTMLDialogElement>('dialog');
  let etag = entity?.etag ?? '';
  const partitionKey = h('input', { id: 'edit-pk', spellcheck: 'false', readonly: entity !== undefined });
  const rowKey = h('input', { id: 'edit-rk', spellcheck: 'false', readonly: entity !== undefined });
  const rows = h('div', { class: 'property-rows', id: 'edit-properties' });
  const message = h('div', { id: 'edit-message', class: 'error', role: 'alert' });
  const modeSelect = h(
    'select',
    { id: 'edit-mode' },
    h('option', { value: 'replace' }, 'Replace (the entity becomes exactly this)'),
    h('option', { value: 'merge' }, 'Merge (only these properties change)'),
  );

  const fill = (source: Entity | undefined): void => {
    partitionKey.value = source?.partitionKey ?? '';
    rowKey.value = source?.rowKey ?? '';
    replace(rows);
    for (const [name, property] of source?.properties ?? []) addRow(name, property);
  };

  const addRow = (name = '', property: Property = { type: 'Edm.String', text: '' }): void => {
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
    const setValueControl = (type: EdmType, text: string): void => {
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
      control.addEventListener('input', validate);
      replace(valueSlot, control);
    };
    const valueText = (): string => (valueSlot.querySelector('.prop-value') as HTMLInputElement).value;
    const validate = (): boolean => {
      const reason =
        propertyNameReason(nameInput.value.trim()) ?? invalidReason(typeSelect.value as EdmType, valueText());
      rowError.textContent = reason ?? '';
      return reason === undefined;
    };
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
    rows.appendChild(row);
  };

  /** The form's properties, or undefined after marking what is invalid. */
  const collect = (): [string, Property][] | undefined => {
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
  };

  const reload = async (): Promise<void> => {
    try {
      const fresh = await getEntity(credentials, table, partitionKey.value, rowKey.value);
      etag = fresh.etag;
      fill(fresh);
      replace(message, 'Reloaded the entity as it is now; your edits were discarded.');
      message.className = 'info';
    } catch (error) {
      replace(message, errorMessage(error));
    }
  };

  const save = async (): Promise<void> => {
    const properties = collect();
    if (properties === undefined) {
      replace(message, 'Fix the marked values first; nothing was sent.');
      message.className = 'error';
      return;
    }
    const mode: WriteMode = entity === undefined ? 'insert' : (modeSelect.value as WriteMode);
    try {
      await writeEntity(credentials, table, entityToWire(partitionKey.value, rowKey.value, properties), mode, etag);
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
            { type: 'button', id: 'edit-reload', onclick: () => void reload() },
            'Reload the current version',
          ),
        );
      } else replace(message, errorMessage(error));
      return;
    }
    dialog.close();
    status(entity === undefined ? 'Entity added.' : `Entity saved (${mode}).`);
    await onSaved();
  };

  fill(entity);
  replace(
    dialog,
    h(
      'form',
      {
        method: 'dialog',
        class: 'editor',
        onsubmit: (event: Event) => {
          event.preventDefault();
          void save();
        },
      },
      h('h3', {}, entity === undefined ? `Add entity to ${table}` : `Edit entity in ${table}`),
      h(
        'div',
        { class: 'row wrap' },
        h('div', { class: 'field' }, h('label', { for: 'edit-pk' }, 'PartitionKey'), partitionKey),
        h('div', { class: 'field' }, h('label', { for: 'edit-rk' }, 'RowKey'), rowKey),
      ),
      entity === undefined
        ? null
        : h('div', { class: 'field' }, h('label', { for: 'edit-mode' }, 'Update'), modeSelect),
      h(
        'div',
        { class: 'property-head', 'aria-hidden': 'true' },
        h('span', {}, 'name'),
        h('span', {}, 'type'),
        h('span', {}, 'value'),
      ),
      rows,
      h('button', { type: 'button', id: 'add-property', onclick: () => addRow() }, '+ property'),
      message,
      h(
        'div',
        { class: 'row end' },
        h('button', { type: 'button', id: 'edit-cancel', onclick: () => dialog.close() }, 'Cancel'),
        h('button', { type: 'submit', id: 'edit-save', class: 'primary' }, entity === undefined ? 'Insert' : 'Save'),
      ),
    ),
  );
  dialog.showModal();
  (entity === undefined
    ? partitionKey
    : ((rows.querySelector('.prop-value') as HTMLElement | null) ?? partitionKey)
  ).focus();
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
