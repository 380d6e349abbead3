// Small tools around one table's grid: jump to a key, the built query as code for the official
// SDKs (JavaScript and Python), an entity as JSON with a copy button, and several rows deleted in
// one confirmed step. The snippets never hold the key: it stays in this tab.
import { deleteEntity, type Credentials, type Query } from './api.js';
import { byId, h, replace } from './dom.js';
import { entityToWire, type Entity } from './edm.js';
import { tableOrigin } from './endpoints.js';
import { errorMessage, status } from './session.js';

/** A string literal of OData $filter: quotes doubled. */
function odataString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** PartitionKey (and RowKey) inputs; `onJump` gets the filter that finds them. */
export function jumpControls(onJump: (filter: string) => void): HTMLElement {
  const partitionKey = h('input', {
    id: 'jump-pk',
    placeholder: 'PartitionKey',
    'aria-label': 'jump to PartitionKey',
    spellcheck: 'false',
  });
  const rowKey = h('input', {
    id: 'jump-rk',
    placeholder: 'RowKey (optional)',
    'aria-label': 'jump to RowKey',
    spellcheck: 'false',
  });
  const jump = (event: Event): void => {
    event.preventDefault();
    const filter = `PartitionKey eq ${odataString(partitionKey.value)}`;
    onJump(rowKey.value === '' ? filter : `${filter} and RowKey eq ${odataString(rowKey.value)}`);
  };
  return h(
    'form',
    { class: 'jump row wrap', id: 'jump-form', onsubmit: jump },
    partitionKey,
    rowKey,
    h('button', { type: 'submit', id: 'jump' }, 'Go to key'),
  );
}

/** The query as code for @azure/data-tables (JavaScript) and azure-data-tables (Python). */
export function querySnippets(table: string, account: string, query: Query): { javascript: string; python: string } {
  const endpoint = `${tableOrigin()}/${account}`;
  const filter = query.filter.trim();
  const select = query.select
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const jsOptions = [
    filter === '' ? '' : `filter: ${JSON.stringify(filter)}`,
    select.length === 0 ? '' : `select: ${JSON.stringify(select)}`,
  ]
    .filter((part) => part !== '')
    .join(', ');
  const javascript = [
    'import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";',
    '',
    `const credential = new AzureNamedKeyCredential(${JSON.stringify(account)}, process.env.AZURE_TABLES_KEY);`,
    `const client = new TableClient(${JSON.stringify(endpoint)}, ${JSON.stringify(table)}, credential);`,
    `for await (const entity of client.listEntities(${jsOptions === '' ? '' : `{ queryOptions: { ${jsOptions} } }`})) {`,
    '  console.log(entity);',
    '}',
  ].join('\n');
  const pyArguments = [
    filter === '' ? '' : `query_filter=${JSON.stringify(filter)}`,
    select.length === 0 ? '' : `select=${JSON.stringify(select)}`,
  ]
    .filter((part) => part !== '')
    .join(', ');
  const python = [
    'import os',
    'from azure.core.credentials import AzureNamedKeyCredential',
    'from azure.data.tables import TableClient',
    '',
    `credential = AzureNamedKeyCredential(${JSON.stringify(account)}, os.environ["AZURE_TABLES_KEY"])`,
    `client = TableClient(endpoint=${JSON.stringify(endpoint)}, table_name=${JSON.stringify(table)}, credential=credential)`,
    `for entity in client.${filter === '' ? `list_entities(${pyArguments})` : `query_entities(${pyArguments})`}:`,
    '    print(entity)',
  ].join('\n');
  return { javascript, python };
}

/** Opens the dialog with text blocks, each with a copy button. */
function showBlocks(title: string, blocks: readonly { id: string; label: string; text: string }[]): void {
  const dialog = byId<HTMLDialogElement>('dialog');
  replace(
    dialog,
    h('h3', {}, title),
    blocks.map(({ id, label, text }) =>
      h(
        'div',
        { class: 'code-block' },
        h(
          'div',
          { class: 'row' },
          h('strong', {}, label),
          h('button', { type: 'button', id: `${id}-copy`, onclick: () => void copy(text) }, 'Copy'),
        ),
        h('pre', { id, class: 'code' }, text),
      ),
    ),
    h(
      'div',
      { class: 'row end' },
      h('button', { type: 'button', id: 'blocks-close', onclick: () => dialog.close() }, 'Close'),
    ),
  );
  dialog.showModal();
}

async function copy(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    status('Copied to the clipboard.');
  } catch (error) {
    status(`Could not copy: ${errorMessage(error)} (select the text instead)`, 'error');
  }
}

export function showQueryCode(table: string, account: string, query: Query): void {
  const { javascript, python } = querySnippets(table, account, query);
  showBlocks(`The query on ${table} as code (set AZURE_TABLES_KEY to the account key)`, [
    { id: 'code-javascript', label: 'JavaScript (@azure/data-tables)', text: javascript },
    { id: 'code-python', label: 'Python (azure-data-tables)', text: python },
  ]);
}

/** The entity as the service's JSON (every non-string property annotated), to read or copy. */
export function showEntityJson(entity: Entity): void {
  const wire = {
    ...entityToWire(entity.partitionKey, entity.rowKey, entity.properties),
    Timestamp: entity.timestamp || undefined,
  };
  showBlocks(`Entity ${entity.partitionKey} / ${entity.rowKey}`, [
    { id: 'entity-json', label: 'JSON', text: JSON.stringify(wire, null, 2) },
  ]);
}

/** Deletes `entities` after one confirmation; resolves to how many were deleted. */
export async function deleteSelected(
  credentials: Credentials,
  table: string,
  entities: readonly Entity[],
): Promise<number> {
  if (
    entities.length === 0 ||
    !confirm(`Delete ${entities.length} selected entit${entities.length === 1 ? 'y' : 'ies'} of ${table}?`)
  )
    return 0;
  let deleted = 0;
  const failures: string[] = [];
  for (const entity of entities) {
    try {
      await deleteEntity(credentials, table, entity.partitionKey, entity.rowKey, entity.etag || '*');
      deleted++;
    } catch (error) {
      failures.push(`${entity.partitionKey}/${entity.rowKey}: ${errorMessage(error)}`);
    }
  }
  status(
    `${deleted} entities deleted${failures.length === 0 ? '.' : `; ${failures.length} failed, first: ${failures[0]}`}`,
    failures.length === 0 ? 'info' : 'error',
  );
  return deleted;
}
