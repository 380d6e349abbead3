// cerulean backup <file>: a consistent snapshot of a (running) server's data, taken by the storage
// engine itself while the server keeps serving; or, with -c, an account backup of tables and
// containers through the public APIs of any endpoint (src/cli/backup-run.ts).
import path from 'node:path';
import { type Command, Option } from 'commander';
import {
  type ContentSummary,
  type DataSource,
  type ServiceCounts,
  UseEngineToolsError,
  backupData,
} from '../../storage/backup.js';
import { backupAccount, type AccountEndpoints, type AccountTotals } from '../backup-run.js';
import { connectionReaches, resolveBlobEndpoint } from '../blob-endpoint.js';
import { blobError } from '../blob-errors.js';
import { resolveEndpoint } from '../endpoint.js';
import { queueMessageModes, type QueueMessageMode } from '../queue-copy.js';
import { resolveQueueEndpoint } from '../queue-endpoint.js';
import { type CliCommand, CliError, formatCount, locationOf, locationOption } from '../command.js';
import { accountConnectionOption, collect } from './account-options.js';

interface BackupOptions {
  location?: string;
  database?: string;
  connectionString?: string;
  container: string[];
  table: string[];
  queue: string[];
  queueMessages: QueueMessageMode;
  versions?: boolean;
}

export const backupCommand: CliCommand = {
  name: 'backup',
  register(program: Command) {
    program
      .command('backup')
      .description(
        "snapshot a server's data directory into one file, while the server runs (SQLite online backup); " +
          "or, with -c, an account's tables, queues and containers through its APIs",
      )
      .argument('<file>', 'the backup file to write (a snapshot replaces it; an account backup refuses to)')
      .addOption(locationOption('the data directory to back up'))
      .option('--database <url>', 'a database URL instead (postgres://…: use pg_dump)')
      .addOption(accountConnectionOption('back up the tables, queues and containers of this account through its APIs'))
      .option('-t, --table <name>', 'account backup: a table to back up (repeat for more)', collect, [])
      .option('--queue <name>', 'account backup: a queue to back up (repeat for more)', collect, [])
      .option('--container <name>', 'account backup: a container to back up (repeat for more)', collect, [])
      .option('--versions', "account backup: keep each blob's previous versions too (List Blobs include=versions)")
      .addOption(
        new Option('--queue-messages <how>', 'account backup: peek (the first 32 visible, source untouched), all, none')
          .choices(queueMessageModes)
          .default('peek'),
      )
      .addHelpText(
        'after',
        '\nAn account backup holds every table, queue and container unless -t, --queue or --container name some.\n' +
          "A queue's visible messages are held as text and expiry (not ids, insertion times or dequeue counts).\n" +
          '\nExample:\n  cerulean backup nightly.sqlite --location ./data\n' +
          '  cerulean backup account.backup -c UseDevelopmentStorage=true\n',
      )
      .action((file: string, options: BackupOptions) => backup(file, options));
  },
};

async function backup(file: string, options: BackupOptions): Promise<void> {
  if (accountMode(options)) {
    const endpoints = accountEndpoints(options.connectionString);
    if (options.table.length > 0 && endpoints.tables === undefined)
      throw new CliError('-t names tables, but the connection string names no TableEndpoint', 2);
    if (options.container.length > 0 && endpoints.blobs === undefined)
      throw new CliError('--container names containers, but the connection string names no BlobEndpoint', 2);
    if (options.queue.length > 0 && endpoints.queues === undefined)
      throw new CliError('--queue names queues, but the connection string names no QueueEndpoint', 2);
    let totals: AccountTotals;
    try {
      const { table: tables, queue: queues, container: containers, queueMessages, versions } = options;
      totals = await backupAccount(endpoints, file, { tables, queues, containers, queueMessages, versions });
    } catch (error) {
      throw blobError(error, endpoints.label);
    }
    process.stderr.write(`backup: ${describeTotals(totals, 'not held (see --queue-messages)')} written to ${file}\n`);
    return;
  }
  const source = dataSourceOf(options);
  try {
    const { counts, bytes, content } = await backupData(source, file);
    const written = `${describeServiceCounts(counts)}, ${formatCount(bytes)} bytes written to ${file}`;
    process.stderr.write(`backup: ${written}${describeContent(content)}\n`);
  } catch (error) {
    throw engineError(error);
  }
}

/** "1 tables (301 entities), 2 queues (5 messages), 1 containers (3 blobs)" */
export function describeServiceCounts(counts: ServiceCounts): string {
  const c = (n: number) => formatCount(n);
  return (
    `${c(counts.tables)} tables (${c(counts.entities)} entities), ${c(counts.queues)} queues ` +
    `(${c(counts.messages)} messages), ${c(counts.containers)} containers (${c(counts.blobs)} blobs)`
  );
}

/** The blob content files a data-directory backup holds, for its summary line (nothing when none). */
export function describeContent(content: ContentSummary): string {
  if (content.files === 0) return '';
  return ` (with ${formatCount(content.files)} blob content files, ${formatCount(content.bytes)} bytes)`;
}

/** -c, -t or --container ask for an account backup; they exclude --location and --database. */
export function accountMode(options: {
  connectionString?: string;
  container?: string[];
  table?: string[];
  queue?: string[];
  location?: string;
}): boolean {
  const named = (options.container?.length ?? 0) + (options.table?.length ?? 0) + (options.queue?.length ?? 0) > 0;
  const account = options.connectionString !== undefined || named;
  const engine = options.location !== undefined || ('database' in options && options.database !== undefined);
  if (account && engine) throw new CliError('-c, -t, --queue and --container exclude --location and --database', 2);
  return account;
}

/**
 * The services a connection string reaches (an http(s) URL: the Blob service's, with its SAS);
 * without one, both of the local server or the environment's connection strings.
 */
function accountEndpoints(text: string | undefined): AccountEndpoints {
  const url = text !== undefined && /^https?:\/\//i.test(text.trim());
  const tables =
    text === undefined || (!url && connectionReaches(text, 'TableEndpoint')) ? resolveEndpoint(text) : undefined;
  const queues =
    text === undefined || (!url && connectionReaches(text, 'QueueEndpoint')) ? resolveQueueEndpoint(text) : undefined;
  const blobs = text === undefined || connectionReaches(text, 'BlobEndpoint') ? resolveBlobEndpoint(text) : undefined;
  if (tables === undefined && queues === undefined && blobs === undefined)
    throw new CliError('the connection string names no TableEndpoint, QueueEndpoint or BlobEndpoint', 2);
  const label = [tables?.label, queues?.label, blobs?.label].filter((part) => part !== undefined).join(', ');
  return { label, tables, queues, blobs };
}

/** "1 tables (25 entities), 2 queues (45 messages), 1 containers (3 blobs, 10,485,895 bytes)" */
export function describeTotals(totals: AccountTotals, left = 'not held'): string {
  const c = formatCount;
  const skipped = totals.skipped > 0 ? `; ${c(totals.skipped)} page blobs skipped` : '';
  const messagesLeft = totals.messagesLeft > 0 ? `; ${c(totals.messagesLeft)} messages ${left}` : '';
  const versions = totals.versions > 0 ? `${c(totals.versions)} previous versions, ` : '';
  const tags = totals.tagsNotKept.length > 0 ? `; blob tags not kept: ${totals.tagsNotKept.join(', ')}` : '';
  const access = totals.accessNotKept.length > 0 ? `; access control not kept: ${totals.accessNotKept.join(', ')}` : '';
  return (
    `${c(totals.tables)} tables (${c(totals.entities)} entities), ${c(totals.queues)} queues ` +
    `(${c(totals.messages)} messages), ${c(totals.containers)} containers ` +
    `(${c(totals.blobs)} blobs, ${versions}${c(totals.bytes)} bytes)${messagesLeft}${skipped}${tags}${access}`
  );
}

export function dataSourceOf(options: { location?: string; database?: string }): DataSource {
  if (options.database !== undefined) {
    if (options.location !== undefined) throw new CliError('--location and --database exclude each other', 2);
    return { databaseUrl: options.database };
  }
  return { location: path.resolve(locationOf(options.location)) };
}

/** Engine errors become one-line CliErrors; "use the engine's own tools" is a usage error (exit 2). */
export function engineError(error: unknown): Error {
  if (error instanceof UseEngineToolsError) return new CliError(error.message, 2);
  if (error instanceof Error) return new CliError(error.message);
  return new CliError(String(error));
}
