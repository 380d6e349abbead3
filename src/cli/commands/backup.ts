// cerulean backup <file>: a consistent snapshot of a (running) server's data, taken by the storage
// engine itself while the server keeps serving; or, with -c, an account backup of containers and
// blobs through the public Blob API of any endpoint (src/cli/blob-backup.ts).
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { type DataSource, UseEngineToolsError, backupData } from '../../storage/backup.js';
import { backupBlobs, type BlobTotals } from '../blob-backup.js';
import { resolveBlobEndpoint } from '../blob-endpoint.js';
import { blobError } from '../blob-errors.js';
import { type CliCommand, CliError, formatCount, locationOf, locationOption } from '../command.js';
import { blobConnectionOption, collect } from './blob-options.js';

interface BackupOptions {
  location?: string;
  database?: string;
  connectionString?: string;
  container: string[];
}

export const backupCommand: CliCommand = {
  name: 'backup',
  register(program: Command) {
    program
      .command('backup')
      .description(
        "snapshot a server's data directory into one file, while the server runs (SQLite online backup); " +
          "or, with -c, an account's containers and blobs",
      )
      .argument('<file>', 'the backup file to write (a snapshot replaces it; an account backup refuses to)')
      .addOption(locationOption('the data directory to back up'))
      .option('--database <url>', 'a database URL instead (postgres://…: use pg_dump)')
      .addOption(blobConnectionOption('back up the containers and blobs of this account through its Blob API'))
      .option('--container <name>', 'with -c: a container to back up (repeat for more; default all)', collect, [])
      .addHelpText(
        'after',
        '\nExamples:\n  cerulean backup nightly.sqlite --location ./data\n' +
          '  cerulean backup blobs.backup -c UseDevelopmentStorage=true\n',
      )
      .action((file: string, options: BackupOptions) => backup(file, options));
  },
};

async function backup(file: string, options: BackupOptions): Promise<void> {
  if (accountMode(options)) {
    const endpoint = resolveBlobEndpoint(options.connectionString);
    let totals: BlobTotals;
    try {
      totals = await backupBlobs(endpoint, file, options.container);
    } catch (error) {
      throw blobError(error, endpoint.label);
    }
    process.stderr.write(`backup: ${describeTotals(totals)} written to ${file}\n`);
    return;
  }
  const source = dataSourceOf(options);
  try {
    const summary = await backupData(source, file);
    process.stderr.write(
      `backup: ${formatCount(summary.tables)} tables, ${formatCount(summary.bytes)} bytes written to ${file}\n`,
    );
  } catch (error) {
    throw engineError(error);
  }
  // The SQLite engine keeps blob content in files beside its database, which the snapshot does not copy.
  if ('location' in source && existsSync(path.join(source.location, 'blobs'))) {
    process.stderr.write(
      'backup: blob content (the blobs/ folder of the data directory) is not in the snapshot; ' +
        'back containers and blobs up with: cerulean backup FILE -c CONNECTION\n',
    );
  }
}

/** -c (or --container) asks for an account backup; it excludes --location and --database. */
export function accountMode(options: { connectionString?: string; container?: string[]; location?: string }): boolean {
  const account = options.connectionString !== undefined || (options.container?.length ?? 0) > 0;
  const engine = options.location !== undefined || ('database' in options && options.database !== undefined);
  if (account && engine) throw new CliError('-c and --container exclude --location and --database', 2);
  return account;
}

export function describeTotals(totals: BlobTotals): string {
  const skipped = totals.skipped > 0 ? ` (${formatCount(totals.skipped)} page blobs skipped)` : '';
  return (
    `${formatCount(totals.containers)} containers, ${formatCount(totals.blobs)} blobs, ` +
    `${formatCount(totals.bytes)} bytes${skipped}`
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
