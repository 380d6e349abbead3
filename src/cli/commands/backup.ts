// cerulean backup <file>: a consistent snapshot of a (running) server's data, taken by the storage
// engine itself while the server keeps serving.
import path from 'node:path';
import type { Command } from 'commander';
import { type DataSource, UseEngineToolsError, backupData } from '../../storage/backup.js';
import { type CliCommand, CliError, formatCount, locationOf, locationOption } from '../command.js';

interface BackupOptions {
  location?: string;
  database?: string;
}

export const backupCommand: CliCommand = {
  name: 'backup',
  register(program: Command) {
    program
      .command('backup')
      .description("snapshot a server's data directory into one file, while the server runs (SQLite online backup)")
      .argument('<file>', 'the backup file to write (replaced if it exists)')
      .addOption(locationOption('the data directory to back up'))
      .option('--database <url>', 'a database URL instead (postgres://…: use pg_dump)')
      .addHelpText('after', '\nExample:\n  cerulean backup nightly.sqlite --location ./data\n')
      .action((file: string, options: BackupOptions) => backup(file, options));
  },
};

async function backup(file: string, options: BackupOptions): Promise<void> {
  const source = dataSourceOf(options);
  try {
    const summary = await backupData(source, file);
    process.stderr.write(
      `backup: ${formatCount(summary.tables)} tables, ${formatCount(summary.bytes)} bytes written to ${file}\n`,
    );
  } catch (error) {
    throw engineError(error);
  }
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
