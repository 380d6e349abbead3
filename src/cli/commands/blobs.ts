// The Blob service from the command line, with the verbs azcopy and `az storage blob` users know:
// `cerulean containers` lists the containers; `cerulean blobs ls | upload | download | sync | rm`
// list, move and remove blobs (src/cli/blob-files.ts), against any endpoint through the official
// Blob SDK (src/cli/blob-endpoint.ts).
import { type Command, Option } from 'commander';
import type { ContainerClient } from '@azure/storage-blob';
import { defaultBlobEndpointUrl, resolveBlobEndpoint } from '../blob-endpoint.js';
import { blobError } from '../blob-errors.js';
import {
  deleteBlobs,
  downloadBlobs,
  localFiles,
  localFolders,
  makeDirectories,
  splitContainerPath,
  uploadFiles,
  type TransferCounts,
  type TransferRun,
} from '../blob-files.js';
import { type CliCommand, commandGroup, finishCommandGroup, formatCount, wholeNumber } from '../command.js';
import { Interruption, interruptedError } from '../interrupt.js';
import { accountIsHierarchical } from '../path-access.js';
import { transfersInFlightDefault } from '../pool.js';
import { startTransferProgress } from '../progress.js';
import { storageConnectionStringVariable } from '../storage-connection.js';

interface BlobOptions {
  connectionString?: string;
  json?: boolean;
  prefix?: string;
  delimiter?: string;
  parallel: number;
  delete?: boolean;
}

function blobConnectionOption(): Option {
  return new Option(
    '-c, --connection-string <string>',
    'connection string with a BlobEndpoint, UseDevelopmentStorage=true, or a Blob service SAS URL ' +
      `(env ${storageConnectionStringVariable}; default the local server, ${defaultBlobEndpointUrl})`,
  );
}

function parallelOption(): Option {
  return new Option('--parallel <n>', 'transfers at once')
    .argParser(wholeNumber('--parallel', 1))
    .default(transfersInFlightDefault);
}

export const containersCommand: CliCommand = {
  name: 'containers',
  register(program: Command) {
    program
      .command('containers')
      .description('list the blob containers of the account')
      .option('--json', 'one JSON document for scripts')
      .addOption(blobConnectionOption())
      .addHelpText('after', '\nExample:\n  cerulean containers -c UseDevelopmentStorage=true\n')
      .action((options: BlobOptions) => listContainers(options));
  },
};

export const blobsCommand: CliCommand = {
  name: 'blobs',
  register(program: Command) {
    const blobs = commandGroup(
      program,
      'blobs',
      'list, upload, download, sync or remove blobs',
      'ls, upload, download, sync or rm',
    );
    registerListAndRemove(blobs);
    registerTransfers(blobs);
    finishCommandGroup(blobs);
  },
};

function registerListAndRemove(blobs: Command): void {
  blobs
    .command('ls')
    .description('list the blobs of a container: size, last modified, type, name')
    .argument('<container>', 'container name')
    .option('--prefix <p>', 'only blobs whose names start with this')
    .option('--delimiter <d>', 'list one level: names up to the delimiter show once, ending with it (e.g. /)')
    .option('--json', 'one JSON line per blob or prefix')
    .addOption(blobConnectionOption())
    .addHelpText('after', '\nExample:\n  cerulean blobs ls photos --prefix 2024/ --delimiter /\n')
    .action((container: string, options: BlobOptions) => listBlobs(container, options));
  blobs
    .command('rm')
    .description('delete the blobs of a container whose names start with a prefix (with their snapshots)')
    .argument('<container>', 'container name')
    .requiredOption('--prefix <p>', "the names to delete start with this ('' deletes every blob)")
    .addOption(parallelOption())
    .addOption(blobConnectionOption())
    .addHelpText('after', '\nExample:\n  cerulean blobs rm photos --prefix tmp/\n')
    .action((container: string, options: BlobOptions) => removeBlobs(container, options));
}

function registerTransfers(blobs: Command): void {
  blobs
    .command('upload')
    .description('upload a file, or a folder with its subfolders; files identical to the blobs there are skipped')
    .argument('<source>', 'a file or a folder')
    .argument('<container>', 'container[/prefix]: the blobs are named prefix + the path under the folder')
    .addOption(parallelOption())
    .addOption(blobConnectionOption())
    .addHelpText('after', transferHelp('cerulean blobs upload ./site web/v2'))
    .action((source: string, target: string, options: BlobOptions) => upload(source, target, options, false));
  blobs
    .command('download')
    .description('download the blobs of a container (under a prefix) into a folder; identical files are skipped')
    .argument('<container>', 'container[/prefix]: the prefix up to its last / is left out of the file names')
    .argument('<folder>', 'the folder to write into (created if missing)')
    .addOption(parallelOption())
    .addOption(blobConnectionOption())
    .addHelpText('after', transferHelp('cerulean blobs download web/v2/ ./site-copy'))
    .action((source: string, folder: string, options: BlobOptions) => download(source, folder, options));
  blobs
    .command('sync')
    .description('make a container (under a prefix) hold what a folder holds: upload what changed (size, MD5)')
    .argument('<folder>', 'the folder: the source of truth')
    .argument('<container>', 'container[/prefix]')
    .option('--delete', 'also delete the blobs under the prefix that have no file in the folder')
    .addOption(parallelOption())
    .addOption(blobConnectionOption())
    .addHelpText('after', transferHelp('cerulean blobs sync ./site web --delete'))
    .action((folder: string, target: string, options: BlobOptions) => upload(folder, target, options, true));
}

function transferHelp(example: string): string {
  return (
    "\nA file and a blob are identical when they have the same size and MD5 (the blob's Content-MD5, which\n" +
    'upload sets on every blob it writes): identical ones are not transferred again, so running the same command\n' +
    'after Ctrl-C resumes it. Progress on stderr: a live line on a terminal, a line every 5 s otherwise.\n' +
    `\nExample:\n  ${example}\n`
  );
}

async function listContainers(options: BlobOptions): Promise<void> {
  const { service, label } = resolveBlobEndpoint(options.connectionString);
  const containers: { name: string; lastModified: string; publicAccess: string | null }[] = [];
  try {
    for await (const item of service.listContainers()) {
      const p = item.properties;
      containers.push({
        name: item.name,
        lastModified: p.lastModified.toISOString(),
        publicAccess: p.publicAccess ?? null,
      });
    }
  } catch (error) {
    throw blobError(error, label);
  }
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ containers })}\n`);
    return;
  }
  const width = Math.max(0, ...containers.map((container) => container.name.length));
  for (const c of containers)
    process.stdout.write(`${c.name.padEnd(width)}  ${c.lastModified}  ${c.publicAccess ?? '-'}\n`);
}

async function listBlobs(name: string, options: BlobOptions): Promise<void> {
  const container = containerClient(name, options);
  const print = (line: Record<string, unknown>, text: string) =>
    process.stdout.write(options.json ? `${JSON.stringify(line)}\n` : `${text}\n`);
  try {
    const listing =
      options.delimiter === undefined
        ? container.listBlobsFlat({ prefix: options.prefix })
        : container.listBlobsByHierarchy(options.delimiter, { prefix: options.prefix });
    for await (const item of listing) {
      if ('kind' in item && item.kind === 'prefix') {
        print({ prefix: item.name }, `${'-'.padStart(14)}  ${''.padEnd(24)}  ${''.padEnd(10)}  ${item.name}`);
        continue;
      }
      const p = item.properties;
      const [size, modified, type] = [p.contentLength ?? 0, p.lastModified.toISOString(), p.blobType ?? ''];
      print(
        { name: item.name, sizeBytes: size, lastModified: modified, blobType: type },
        `${formatCount(size).padStart(14)}  ${modified.padEnd(24)}  ${type.padEnd(10)}  ${item.name}`,
      );
    }
  } catch (error) {
    throw blobError(error, `container ${name}`);
  }
}

async function removeBlobs(name: string, options: BlobOptions): Promise<void> {
  const container = containerClient(name, options);
  const interruption = new Interruption('rm');
  let deleted: number;
  try {
    deleted = await deleteBlobs(container, options.prefix ?? '', new Set(), {
      inFlight: options.parallel,
      interruption,
    });
  } catch (error) {
    throw blobError(error, `container ${name}`);
  } finally {
    interruption.dispose();
  }
  if (interruption.requested)
    throw interruptedError(`${formatCount(deleted)} blobs deleted; run the same command to finish`);
  process.stdout.write(`rm ${name}: ${formatCount(deleted)} ${deleted === 1 ? 'blob' : 'blobs'} deleted\n`);
}

/** upload and sync: sync may also delete the blobs under the prefix that no file matches. */
async function upload(source: string, target: string, options: BlobOptions, sync: boolean): Promise<void> {
  const verb = sync ? 'sync' : 'upload';
  const { container: name, prefix } = splitContainerPath(target);
  const files = await localFiles(source, prefix);
  const folders = await localFolders(source, prefix);
  const endpoint = resolveBlobEndpoint(options.connectionString);
  const container = endpoint.service.getContainerClient(name);
  const bytes = files.reduce((sum, file) => sum + file.sizeBytes, 0);
  const interruption = new Interruption(verb);
  const progress = startTransferProgress(verb, 'files', { items: files.length, bytes });
  const run: TransferRun = { inFlight: options.parallel, interruption, progress };
  let counts: TransferCounts;
  let deleted = 0;
  let directories = 0;
  try {
    await container.createIfNotExists();
    if (folders.length > 0 && (await accountIsHierarchical(endpoint.service)))
      directories = await makeDirectories(endpoint.datalake.getFileSystemClient(name), folders);
    counts = await uploadFiles(container, files, run);
    if (sync && options.delete && !interruption.requested) {
      const folder = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
      const keep = new Set([...files.map((file) => file.name), ...folders]);
      deleted = await deleteBlobs(container, folder, keep, run);
    }
  } catch (error) {
    throw blobError(error, `container ${name}`);
  } finally {
    interruption.dispose();
  }
  const made = directories > 0 ? `, ${formatCount(directories)} directories made` : '';
  const line = describeCounts(verb, counts, progress.finish(), deleted) + made;
  if (interruption.requested) throw interruptedError(`${line}; run the same command to finish`);
  process.stderr.write(`${line}\n`);
}

async function download(source: string, folder: string, options: BlobOptions): Promise<void> {
  const { container: name, prefix } = splitContainerPath(source);
  const container = containerClient(name, options);
  const interruption = new Interruption('download');
  const progress = startTransferProgress('download', 'files');
  let counts: TransferCounts;
  try {
    ({ counts } = await downloadBlobs(container, prefix, folder, {
      inFlight: options.parallel,
      interruption,
      progress,
    }));
  } catch (error) {
    throw blobError(error, `container ${name}`);
  } finally {
    interruption.dispose();
  }
  const line = describeCounts('download', counts, progress.finish(), 0);
  if (interruption.requested) throw interruptedError(`${line}; run the same command to finish`);
  process.stderr.write(`${line}\n`);
}

/** "upload: 1,000 files, 65,536,000 bytes transferred, 0 identical skipped (… in 2.1 s …)" */
function describeCounts(verb: string, counts: TransferCounts, timing: string, deleted: number): string {
  const removed = deleted > 0 ? `, ${formatCount(deleted)} blobs deleted` : '';
  return (
    `${verb}: ${formatCount(counts.files)} files, ${formatCount(counts.bytes)} bytes transferred, ` +
    `${formatCount(counts.identical)} identical skipped${removed} (${timing})`
  );
}

function containerClient(name: string, options: BlobOptions): ContainerClient {
  return resolveBlobEndpoint(options.connectionString).service.getContainerClient(name);
}
