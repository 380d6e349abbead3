// Export (this page, or every page of the current query) and import, in typed CSV or JSON lines.
// A whole-result export reads page after page with the largest page size, turning each page into
// file bytes at once (ExportWriter) and showing the count so far; it can be stopped. An import writes
// with Insert Or Replace in entity group transactions of one partition, a few at a time, and
// reports how many went in.
import { queryEntities, upsertBatch, writeEntity, type Continuation, type Credentials, type Query } from './api.js';
import { download, h } from './dom.js';
import { entityToWire, type Entity } from './edm.js';
import { ExportWriter, fileFormats, parseImport, type FileFormat, type ImportedEntity } from './formats.js';
import { errorMessage, status } from './session.js';

const importConcurrency = 4;
const exportPageSize = '1000';
/**
 * An entity group transaction holds at most 100 operations and 4 MiB (Azure REST:
 * performing-entity-group-transactions); stay under both.
 */
const batchEntitiesMax = 100;
const batchBytesMax = 3 * 1024 * 1024;

export function transferControls(
  credentials: Credentials,
  table: string,
  currentQuery: () => Query,
  pageEntities: () => readonly Entity[],
  reload: () => Promise<void>,
): HTMLElement {
  const format = formatSelect();
  const progress = h('span', { id: 'transfer-progress', role: 'status' });
  const context: TransferContext = { credentials, table, progress, reload };
  const fileInput = importFileInput(context);
  return h(
    'div',
    { class: 'transfer row wrap' },
    format,
    ...exportButtons(context, format, currentQuery, pageEntities),
    importLabel(fileInput),
    fileInput,
    progress,
  );
}

/** The choice of file format for exports. */
function formatSelect(): HTMLSelectElement {
  return h(
    'select',
    { id: 'export-format', 'aria-label': 'file format' },
    Object.entries(fileFormats).map(([value, { label }]) => h('option', { value }, label)),
  );
}

/** "Export page", "Export all results" and the "Stop" button shown while exporting all. */
function exportButtons(
  context: TransferContext,
  format: HTMLSelectElement,
  currentQuery: () => Query,
  pageEntities: () => readonly Entity[],
): HTMLElement[] {
  const stop = { requested: false };
  const cancel = h(
    'button',
    { type: 'button', id: 'export-cancel', hidden: true, onclick: () => (stop.requested = true) },
    'Stop',
  );
  const exportPage = (): void => {
    const writer = new ExportWriter(format.value as FileFormat);
    writer.add(pageEntities());
    save(context.table, writer);
    context.progress.textContent = `exported ${writer.count} entities (this page)`;
  };
  const exportAll = async (): Promise<void> => {
    stop.requested = false;
    cancel.hidden = false;
    try {
      await exportResults(context, new ExportWriter(format.value as FileFormat), currentQuery(), stop);
    } finally {
      cancel.hidden = true;
    }
  };
  return [
    h('button', { type: 'button', id: 'export-page', onclick: exportPage }, 'Export page'),
    h('button', { type: 'button', id: 'export-all', onclick: () => void exportAll() }, 'Export all results'),
    cancel,
  ];
}

/** The hidden file input that imports the chosen file. */
function importFileInput(context: TransferContext): HTMLInputElement {
  const fileInput = h('input', {
    type: 'file',
    id: 'import-file',
    accept: '.csv,.jsonl,.json,.ndjson',
    class: 'sr-only',
  });
  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    fileInput.value = '';
    if (file !== undefined) void importFile(context, file);
  });
  return fileInput;
}

/** The visible, keyboard-reachable "Import file…" control that opens the file input. */
function importLabel(fileInput: HTMLInputElement): HTMLElement {
  return h(
    'label',
    {
      class: 'button',
      for: 'import-file',
      tabindex: 0,
      id: 'import-label',
      onkeydown: (event: Event) => {
        if ((event as KeyboardEvent).key === 'Enter' || (event as KeyboardEvent).key === ' ') {
          event.preventDefault();
          fileInput.click();
        }
      },
    },
    'Import file…',
  );
}

interface TransferContext {
  readonly credentials: Credentials;
  readonly table: string;
  /** The line that says how far an export or import got; styled as an error when it failed. */
  readonly progress: HTMLElement;
  readonly reload: () => Promise<void>;
}

function save(table: string, writer: ExportWriter): void {
  const { extension, mime } = fileFormats[writer.format];
  download(`${table}${extension}`, writer.blob(mime));
}

/** Every page of `query` into `writer`, then the file; `stop` ends it early (the Stop button). */
async function exportResults(
  context: TransferContext,
  writer: ExportWriter,
  query: Query,
  stop: { requested: boolean },
): Promise<void> {
  const { credentials, table, progress } = context;
  const wholeQuery = { ...query, top: exportPageSize };
  let continuation: Continuation | undefined;
  let pages = 0;
  progress.className = '';
  try {
    do {
      const page = await queryEntities(credentials, table, wholeQuery, continuation);
      writer.add(page.entities);
      continuation = page.continuation;
      pages++;
      progress.textContent = `exporting… ${writer.count} entities (${pages} page${pages === 1 ? '' : 's'})`;
    } while (continuation !== undefined && !stop.requested);
  } catch (error) {
    progress.textContent = `export failed after ${writer.count} entities: ${errorMessage(error)}`;
    progress.className = 'error';
    return;
  }
  save(table, writer);
  progress.textContent = `exported ${writer.count} entities${stop.requested ? ' (stopped early)' : ''}`;
}

async function importFile(context: TransferContext, file: File): Promise<void> {
  const { credentials, table, progress } = context;
  progress.className = '';
  const fileFormat: FileFormat = /\.(jsonl|ndjson|json)$/i.test(file.name) ? 'jsonl' : 'typed-csv';
  let entities;
  try {
    entities = parseImport(fileFormat, await file.text());
  } catch (error) {
    progress.textContent = `nothing imported: ${file.name}: ${errorMessage(error)}`;
    progress.className = 'error';
    status(progress.textContent, 'error');
    return;
  }
  let done = 0;
  const failures: string[] = [];
  const groups = batches(entities);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < groups.length) {
      const group = groups[next++]!;
      try {
        await upsertBatch(credentials, table, group.map(toWire));
        done += group.length;
      } catch {
        // One bad entity (or a key twice in the file) fails its whole batch: write those one by
        // one, so that the others still go in and each failure is named.
        for (const entity of group) {
          const failure = await writeOne(credentials, table, entity);
          if (failure === undefined) done++;
          else failures.push(failure);
        }
      }
      progress.textContent = `importing… ${done} of ${entities.length}`;
    }
  };
  await Promise.all(Array.from({ length: importConcurrency }, worker));
  progress.textContent =
    `imported ${done} of ${entities.length} entities from ${file.name}` +
    (failures.length === 0 ? '' : `; ${failures.length} failed, first: ${failures[0]}`);
  progress.className = failures.length === 0 ? '' : 'error';
  status(progress.textContent, failures.length === 0 ? 'info' : 'error');
  await context.reload();
}

/** Writes one entity; the reason it failed, or undefined. */
async function writeOne(credentials: Credentials, table: string, entity: ImportedEntity): Promise<string | undefined> {
  try {
    await writeEntity(credentials, table, toWire(entity), 'upsert');
    return undefined;
  } catch (error) {
    return `${entity.partitionKey}/${entity.rowKey}: ${errorMessage(error)}`;
  }
}

function toWire(entity: ImportedEntity): Record<string, unknown> {
  return entityToWire(entity.partitionKey, entity.rowKey, entity.properties);
}

/** The entities grouped by partition, in groups a single entity group transaction can hold. */
function batches(entities: readonly ImportedEntity[]): ImportedEntity[][] {
  const byPartition = new Map<string, ImportedEntity[]>();
  for (const entity of entities) {
    const group = byPartition.get(entity.partitionKey);
    if (group === undefined) byPartition.set(entity.partitionKey, [entity]);
    else group.push(entity);
  }
  const groups: ImportedEntity[][] = [];
  for (const partition of byPartition.values()) {
    let group: ImportedEntity[] = [];
    let bytes = 0;
    for (const entity of partition) {
      const size = JSON.stringify(toWire(entity)).length * 3; // UTF-8 bytes, at most
      if (group.length === batchEntitiesMax || (group.length > 0 && bytes + size > batchBytesMax)) {
        groups.push(group);
        group = [];
        bytes = 0;
      }
      group.push(entity);
      bytes += size;
    }
    groups.push(group);
  }
  return groups;
}
