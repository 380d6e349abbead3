// Account backups: the tables (with their entities), the queues (with their visible messages) and
// the containers (with their blobs) of an account into an account backup file
// (src/cli/account-backup.ts) through the public APIs, and back into an account.
import { existsSync } from 'node:fs';
import { link, rm } from 'node:fs/promises';
import {
  BackupFormatError,
  BackupReader,
  BackupWriter,
  backupFormat,
  backupVersion,
  type BackupEnd,
  type BackupRecord,
} from './account-backup.js';
import { connectionReaches, resolveBlobEndpoint, type BlobEndpoint } from './blob-endpoint.js';
import {
  listCarriedBlobs,
  listContainerNames,
  openBlob,
  readContainer,
  writeBlob,
  writeContainer,
} from './blob-transfer.js';
import type { BlobHeader, OpenBlob } from './blob-transfer.js';
import { openVersion, versionedBlobs } from './blob-versions.js';
import { TagReader } from './blob-tags.js';
import { AccessReader, AccessWriter, accountIsHierarchical } from './path-access.js';
import { CliError } from './command.js';
import { resolveEndpoint, type Endpoint } from './endpoint.js';
import { Interruption, interruptedError } from './interrupt.js';
import { listQueueNames } from './account-copy.js';
import { QueueRestorer, backupQueue } from './queue-backup.js';
import type { QueueMessageMode } from './queue-copy.js';
import { resolveQueueEndpoint, type QueueEndpoint } from './queue-endpoint.js';
import { startTransferProgress } from './progress.js';
import { RejectsFile } from './rejects.js';
import { TableRestorer, backupTable, listTableNames } from './table-backup.js';

export interface AccountTotals {
  tables: number;
  entities: number;
  queues: number;
  messages: number;
  /** Messages the queues held beyond those backed up (a peek shows 32), or expired before the restore. */
  messagesLeft: number;
  containers: number;
  blobs: number;
  /** Previous versions of blobs (`--versions`), not counted in `blobs`. */
  versions: number;
  bytes: number;
  /** Page blobs, which are not carried. */
  skipped: number;
  /** Containers whose blobs' index tags the source would not answer, each with the reason. */
  tagsNotKept: string[];
  /** Containers whose paths' access control was not kept (backup) or not set (restore), each with the reason. */
  accessNotKept: string[];
}

/** What an account backup reaches: either service may be absent from the connection string. */
export interface AccountEndpoints {
  readonly label: string;
  readonly tables: Endpoint | undefined;
  readonly queues: QueueEndpoint | undefined;
  readonly blobs: BlobEndpoint | undefined;
}

/** Named tables, queues and containers only; all empty: everything the endpoints reach. */
export interface AccountSelection {
  readonly tables: readonly string[];
  readonly queues: readonly string[];
  readonly containers: readonly string[];
  readonly queueMessages: QueueMessageMode;
  /** Keep each blob's previous versions too. */
  readonly versions?: boolean;
}

const noTotals = (): AccountTotals => ({
  tables: 0,
  entities: 0,
  queues: 0,
  messages: 0,
  messagesLeft: 0,
  containers: 0,
  blobs: 0,
  versions: 0,
  bytes: 0,
  skipped: 0,
  tagsNotKept: [],
  accessNotKept: [],
});

/**
 * Writes the selection to `file`, first as `<file>.partial`, renamed once complete and on disk: a
 * file of that name is always whole.
 */
export async function backupAccount(
  endpoints: AccountEndpoints,
  file: string,
  selection: AccountSelection,
): Promise<AccountTotals> {
  const everything = [selection.tables, selection.queues, selection.containers].every((named) => named.length === 0);
  const pick = async <T>(endpoint: T | undefined, named: readonly string[], all: (e: T) => Promise<string[]>) => {
    if (endpoint === undefined) return [];
    return named.length > 0 ? [...named] : everything ? all(endpoint) : [];
  };
  const tables = await pick(endpoints.tables, selection.tables, listTableNames);
  const queues = await pick(endpoints.queues, selection.queues, (e) => listQueueNames(e.service, e.label));
  const containers = await pick(endpoints.blobs, selection.containers, (e) => listContainerNames(e.service));
  const partial = `${file}.partial`;
  if (existsSync(file)) throw new CliError(`${file} exists: an account backup never replaces a file`, 2);
  if (existsSync(partial))
    throw new CliError(`${partial} exists (left by a backup that was killed?): remove it, or name another file`, 2);
  const writer = new BackupWriter(partial);
  const totals = noTotals();
  const interruption = new Interruption('backup');
  writer.interruption = interruption;
  // Items are entities, messages and blobs; bytes those of the file. No totals: counting first would
  // mean reading the account twice.
  writer.progress = startTransferProgress('backup', 'items');
  try {
    const createdOn = new Date().toISOString();
    const head = { kind: 'backup', format: backupFormat, version: backupVersion, createdOn } as const;
    await writer.record({ ...head, source: endpoints.label });
    for (const table of tables) {
      totals.entities += await backupTable(endpoints.tables!, writer, table);
      totals.tables++;
    }
    for (const queue of queues) {
      const { messages, left } = await backupQueue(
        endpoints.queues!.service,
        writer,
        queue,
        selection.queueMessages,
        interruption,
      );
      totals.queues++;
      totals.messages += messages;
      totals.messagesLeft += left;
    }
    for (const container of containers)
      await backupContainer(endpoints.blobs!, writer, container, totals, selection.versions === true);
    await writer.record(endRecord(totals));
    await writer.close();
  } catch (error) {
    writer.abandon();
    await rm(partial, { force: true });
    if (interruption.requested) throw interruptedError(`nothing written: ${partial} removed`);
    throw error;
  } finally {
    writer.progress.finish();
    interruption.dispose();
  }
  // A link fails if the name was taken meanwhile, where a rename would replace that file.
  await link(partial, file);
  await rm(partial);
  return totals;
}

function endRecord(totals: AccountTotals): BackupEnd {
  const { tables, entities, queues, messages, containers, blobs, versions, bytes } = totals;
  return { kind: 'end', tables, entities, queues, messages, containers, blobs, versions, bytes };
}

async function backupContainer(
  endpoint: BlobEndpoint,
  writer: BackupWriter,
  name: string,
  totals: AccountTotals,
  versions: boolean,
) {
  await writer.record(await readContainer(endpoint.service, name));
  totals.containers++;
  const container = endpoint.service.getContainerClient(name);
  const tags = new TagReader();
  const hierarchical = await accountIsHierarchical(endpoint.service);
  const access = new AccessReader(endpoint.datalake.getFileSystemClient(name), hierarchical);
  const keep = async (open: OpenBlob) => {
    await writer.record(open.header);
    const bytes = await writer.content(open.content);
    if (bytes !== open.header.sizeBytes)
      throw new Error(
        `${name}/${open.header.name}: ${bytes} bytes read, the service announced ${open.header.sizeBytes}`,
      );
    totals.bytes += bytes;
  };
  if (versions) {
    for await (const { previous, current } of versionedBlobs(container, () => totals.skipped++)) {
      for (const [index, item] of previous.entries()) {
        const open = await openVersion(container, item, tags);
        const last = index === previous.length - 1 && current === undefined;
        await keep(last ? { ...open, header: { ...open.header, currentDeleted: true } } : open);
        totals.versions++;
      }
      const open = current === undefined ? undefined : await openBlob(container, current, tags, access);
      if (open === undefined) continue; // none, or deleted since the listing
      await keep(open);
      totals.blobs++;
    }
  } else {
    const { items, skipped } = await listCarriedBlobs(container);
    totals.skipped += skipped;
    for (const item of items) {
      const open = await openBlob(container, item, tags, access);
      if (open === undefined) continue; // deleted since the listing
      await keep(open);
      totals.blobs++;
    }
  }
  if (tags.notRead !== undefined) totals.tagsNotKept.push(`${name} (${tags.notRead})`);
  if (hierarchical && access.notRead !== undefined) totals.accessNotKept.push(`${name} (${access.notRead})`);
}

export interface RestoreOptions {
  /** Write into tables and containers that exist already, replacing entities and blobs of the same names. */
  readonly replace: boolean;
}

/** Puts the tables and containers of an account backup file into the account `connection` names. */
export async function restoreAccount(
  connection: string | undefined,
  file: string,
  options: RestoreOptions,
): Promise<AccountTotals> {
  const reader = await BackupReader.open(file);
  const rejects = new RejectsFile(`${file}.rejects.jsonl`);
  const restoring = new Restoring(connection, reader, rejects, options);
  try {
    const head = await reader.record();
    if (head?.kind !== 'backup' || head.format !== backupFormat)
      throw new BackupFormatError(`${file}: not an account backup`);
    if (head.version > backupVersion)
      throw new BackupFormatError(
        `${file}: format version ${head.version}; this cerulean reads up to ${backupVersion}`,
      );
    for (let record = await reader.record(); ; record = await reader.record()) {
      if (record === undefined) throw new BackupFormatError(`${file}: the file ends before its end record`);
      if (record.kind === 'end') return await restoring.end(record);
      await restoring.record(record);
    }
  } finally {
    rejects.close();
    await reader.close();
  }
}

/** One restore under way: its endpoints (resolved when first needed), counts and the current table. */
class Restoring {
  readonly totals = noTotals();
  private tables: TableRestorer | undefined;
  private queues: QueueRestorer | undefined;
  private blobs: BlobEndpoint | undefined;
  /** Whether the destination has a hierarchical namespace, asked once it is first needed. */
  private hierarchical: boolean | undefined;
  /** The current container's writer of its paths' access control. */
  private access: AccessWriter | undefined;
  /** Whether the current container's records carry access control. */
  private accessSeen = false;

  constructor(
    private readonly connection: string | undefined,
    private readonly reader: BackupReader,
    private readonly rejects: RejectsFile,
    private readonly options: RestoreOptions,
  ) {}

  async record(record: BackupRecord): Promise<void> {
    if (record.kind === 'table') {
      if (this.connection !== undefined && !connectionReaches(this.connection, 'TableEndpoint'))
        throw new CliError(`the backup holds tables: give a connection string that names a TableEndpoint`, 2);
      this.tables ??= new TableRestorer(resolveEndpoint(this.connection), this.rejects, this.options.replace);
      await this.tables.startTable(record.name);
      this.totals.tables++;
    } else if (record.kind === 'entity') {
      if (this.tables === undefined) throw new BackupFormatError(`${this.reader.file}: an entity before any table`);
      await this.tables.entity(record);
      this.totals.entities++;
    } else if (record.kind === 'queue') {
      await this.tables?.finish();
      if (this.connection !== undefined && !connectionReaches(this.connection, 'QueueEndpoint'))
        throw new CliError(`the backup holds queues: give a connection string that names a QueueEndpoint`, 2);
      this.queues ??= new QueueRestorer(resolveQueueEndpoint(this.connection).service, this.options.replace);
      await this.queues.queue(record);
      this.totals.queues++;
    } else if (record.kind === 'message') {
      if (this.queues === undefined) throw new BackupFormatError(`${this.reader.file}: a message before any queue`);
      await this.queues.message(record);
      this.totals.messages++;
    } else if (record.kind === 'container') {
      await this.tables?.finish();
      this.blobs ??= resolveBlobEndpoint(this.connection);
      if (!this.options.replace && (await this.blobs.service.getContainerClient(record.name).exists()))
        throw new CliError(
          `container ${record.name} exists at ${this.blobs.label}: delete it first, or give --replace`,
        );
      await writeContainer(this.blobs.service, record);
      this.noteAccess();
      this.hierarchical ??= await accountIsHierarchical(this.blobs.service);
      this.access = new AccessWriter(this.blobs.datalake.getFileSystemClient(record.name), this.hierarchical);
      this.totals.containers++;
    } else if (record.kind === 'blob') {
      if (this.blobs === undefined) throw new BackupFormatError(`${this.reader.file}: a blob before any container`);
      this.totals.bytes += await restoreBlob(this.blobs, this.reader, record, this.access);
      if (record.access !== undefined) this.accessSeen = true;
      if (record.currentDeleted === true)
        await this.blobs.service.getContainerClient(record.container).getBlobClient(record.name).delete();
      if (record.previousVersion === undefined) this.totals.blobs++;
      else this.totals.versions++;
    } else {
      throw new BackupFormatError(`${this.reader.file}: a ${record.kind} record out of place`);
    }
  }

  /** The container just restored: why its paths' access control was not set, if it had some. */
  private noteAccess(): void {
    const reason = this.access?.notWritten;
    if (this.accessSeen && reason !== undefined)
      this.totals.accessNotKept.push(`${this.access!.filesystem.name} (${reason})`);
    this.accessSeen = false;
  }

  async end(end: BackupEnd): Promise<AccountTotals> {
    await this.tables?.finish();
    this.noteAccess();
    const { file } = this.reader;
    const keys = ['tables', 'entities', 'queues', 'messages', 'containers', 'blobs', 'versions', 'bytes'] as const;
    this.totals.messagesLeft = this.queues?.expired ?? 0;
    if (keys.some((key) => (end[key] ?? 0) !== this.totals[key])) {
      const counts = (source: BackupEnd | AccountTotals) => keys.map((key) => `${source[key] ?? 0} ${key}`).join(', ');
      throw new BackupFormatError(`${file}: the end record counts ${counts(end)}; read ${counts(this.totals)}`);
    }
    if (this.rejects.count > 0)
      throw new CliError(`${this.rejects.count} entities refused by the destination, see ${this.rejects.file}`);
    return this.totals;
  }
}

/** Streams one blob's content from the file; its SHA-256 is checked before a block blob is committed. */
async function restoreBlob(
  endpoint: BlobEndpoint,
  reader: BackupReader,
  header: BlobHeader,
  access: AccessWriter | undefined,
): Promise<number> {
  const container = endpoint.service.getContainerClient(header.container);
  let expected: string | undefined;
  const content = async function* () {
    yield* reader.content(header.sizeBytes);
    const trailer = await reader.record();
    if (trailer?.kind !== 'content')
      throw new BackupFormatError(`${reader.file}: ${header.name} has no content record`);
    expected = trailer.sha256;
  };
  const check = (sha256: string) => {
    if (sha256 !== expected)
      throw new BackupFormatError(`${reader.file}: ${header.container}/${header.name} is damaged (SHA-256 differs)`);
  };
  return writeBlob(container, { header, content: content() }, { check, ...(access ? { access } : {}) });
}
