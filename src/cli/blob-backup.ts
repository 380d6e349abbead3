// The containers and blobs of an account into an account backup file (src/cli/account-backup.ts),
// and back into an account, through the public Blob API.
import { rename, rm } from 'node:fs/promises';
import {
  BackupFormatError,
  BackupReader,
  BackupWriter,
  backupFormat,
  backupVersion,
  type BackupRecord,
} from './account-backup.js';
import type { BlobEndpoint } from './blob-endpoint.js';
import {
  listCarriedBlobs,
  listContainerNames,
  openBlob,
  readContainer,
  writeBlob,
  writeContainer,
  type BlobHeader,
} from './blob-transfer.js';
import { CliError } from './command.js';

export interface BlobTotals {
  containers: number;
  blobs: number;
  bytes: number;
  /** Page blobs, which are not carried. */
  skipped: number;
}

/**
 * Writes `containers` (default: every container) of the endpoint to `file`, first as
 * `<file>.partial`, renamed once complete and on disk: a file of that name is always whole.
 */
export async function backupBlobs(endpoint: BlobEndpoint, file: string, containers: string[]): Promise<BlobTotals> {
  const partial = `${file}.partial`;
  const writer = new BackupWriter(partial);
  const totals: BlobTotals = { containers: 0, blobs: 0, bytes: 0, skipped: 0 };
  try {
    const names = containers.length > 0 ? containers : await listContainerNames(endpoint.service);
    const createdOn = new Date().toISOString();
    await writer.record({
      kind: 'backup',
      format: backupFormat,
      version: backupVersion,
      createdOn,
      source: endpoint.label,
    });
    for (const name of names) {
      await writer.record(await readContainer(endpoint.service, name));
      totals.containers++;
      const container = endpoint.service.getContainerClient(name);
      const { items, skipped } = await listCarriedBlobs(container);
      totals.skipped += skipped;
      for (const item of items) {
        const open = await openBlob(container, item);
        if (open === undefined) continue; // deleted since the listing
        await writer.record(open.header);
        const bytes = await writer.content(open.content);
        if (bytes !== open.header.sizeBytes)
          throw new Error(`${name}/${item.name}: ${bytes} bytes read, the service announced ${open.header.sizeBytes}`);
        totals.blobs++;
        totals.bytes += bytes;
      }
    }
    await writer.record({ kind: 'end', containers: totals.containers, blobs: totals.blobs, bytes: totals.bytes });
    await writer.close();
  } catch (error) {
    writer.abandon();
    await rm(partial, { force: true });
    throw error;
  }
  await rename(partial, file);
  return totals;
}

export interface RestoreOptions {
  /** Write into containers that exist already, replacing blobs of the same names. */
  readonly replace: boolean;
}

/** Puts the containers and blobs of an account backup file into the endpoint's account. */
export async function restoreBlobs(endpoint: BlobEndpoint, file: string, options: RestoreOptions): Promise<BlobTotals> {
  const reader = await BackupReader.open(file);
  const totals: BlobTotals = { containers: 0, blobs: 0, bytes: 0, skipped: 0 };
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
      if (record.kind === 'end') return checkedTotals(file, record, totals);
      await restoreRecord(endpoint, reader, record, options, totals);
    }
  } finally {
    await reader.close();
  }
}

async function restoreRecord(
  endpoint: BlobEndpoint,
  reader: BackupReader,
  record: BackupRecord,
  options: RestoreOptions,
  totals: BlobTotals,
): Promise<void> {
  if (record.kind === 'container') {
    if (!options.replace && (await endpoint.service.getContainerClient(record.name).exists()))
      throw new CliError(`container ${record.name} exists at ${endpoint.label}: delete it first, or give --replace`);
    await writeContainer(endpoint.service, record);
    totals.containers++;
  } else if (record.kind === 'blob') {
    totals.bytes += await restoreBlob(endpoint, reader, record);
    totals.blobs++;
  } else {
    throw new BackupFormatError(`${reader.file}: a ${record.kind} record out of place`);
  }
}

/** Streams one blob's content from the file; its SHA-256 is checked before a block blob is committed. */
async function restoreBlob(endpoint: BlobEndpoint, reader: BackupReader, header: BlobHeader): Promise<number> {
  const container = endpoint.service.getContainerClient(header.container);
  let expected: string | undefined;
  const content = async function* () {
    yield* reader.content(header.sizeBytes);
    const trailer = await reader.record();
    if (trailer?.kind !== 'content')
      throw new BackupFormatError(`${reader.file}: ${header.name} has no content record`);
    expected = trailer.sha256;
  };
  return writeBlob(
    container,
    { header, content: content() },
    {
      check: (sha256) => {
        if (sha256 !== expected)
          throw new BackupFormatError(
            `${reader.file}: ${header.container}/${header.name} is damaged (SHA-256 differs)`,
          );
      },
    },
  );
}

function checkedTotals(file: string, end: BackupRecord & { kind: 'end' }, totals: BlobTotals): BlobTotals {
  if (end.containers !== totals.containers || end.blobs !== totals.blobs || end.bytes !== totals.bytes) {
    throw new BackupFormatError(
      `${file}: the end record counts ${end.containers} containers, ${end.blobs} blobs, ${end.bytes} bytes; ` +
        `read ${totals.containers}, ${totals.blobs}, ${totals.bytes}`,
    );
  }
  return totals;
}
