// cerulean restore <file>: a data-directory snapshot back into an empty data directory, or an
// account backup (cerulean backup -c) back into an account through its APIs.
import type { Command } from 'commander';
import { restoreData } from '../../storage/backup.js';
import { isAccountBackup } from '../account-backup.js';
import { restoreAccount } from '../backup-run.js';
import { blobError } from '../blob-errors.js';
import { type CliCommand, CliError, locationOption } from '../command.js';
import {
  accountMode,
  dataSourceOf,
  describeContent,
  describeServiceCounts,
  describeTotals,
  engineError,
} from './backup.js';
import { accountConnectionOption } from './account-options.js';

interface RestoreOptions {
  location?: string;
  database?: string;
  connectionString?: string;
  replace?: boolean;
}

export const restoreCommand: CliCommand = {
  name: 'restore',
  register(program: Command) {
    program
      .command('restore')
      .description('put a backup into an empty data directory (then start the server on it), or into an account')
      .argument('<file>', 'a file written by cerulean backup')
      .addOption(locationOption('the data directory to create; must be empty or absent'))
      .option('--database <url>', 'a database URL instead (postgres://…: use pg_restore)')
      .addOption(
        accountConnectionOption('for an account backup: the account to restore into (default the local server)'),
      )
      .option('--replace', 'account backup: write into tables and containers that exist (same names are replaced)')
      .addHelpText(
        'after',
        '\nExample:\n  cerulean restore nightly.sqlite --location ./restored && cerulean --location ./restored\n' +
          '  cerulean restore blobs.backup -c UseDevelopmentStorage=true\n',
      )
      .action((file: string, options: RestoreOptions) => restore(file, options));
  },
};

async function restore(file: string, options: RestoreOptions): Promise<void> {
  // A file that cannot be read is left to the engine's restore, which says why in its own terms.
  const account = await isAccountBackup(file).catch(() => false);
  if (account) return restoreAccountBackup(file, options);
  if (accountMode({ ...options, location: undefined }) || options.replace)
    throw new CliError(`${file} is a data-directory snapshot: restore it with --location or --database`, 2);
  const target = dataSourceOf(options);
  try {
    const { counts, content } = restoreData(file, target);
    const into = 'location' in target ? target.location : 'the database';
    process.stderr.write(
      `restore: ${describeServiceCounts(counts)} restored into ${into}${describeContent(content)}\n`,
    );
  } catch (error) {
    throw engineError(error);
  }
}

async function restoreAccountBackup(file: string, options: RestoreOptions): Promise<void> {
  if (options.location !== undefined || options.database !== undefined)
    throw new CliError(`${file} is an account backup: restore it with -c, not --location or --database`, 2);
  const where = options.connectionString === undefined ? 'the local server' : 'the account';
  try {
    const totals = await restoreAccount(options.connectionString, file, { replace: options.replace === true });
    process.stderr.write(`restore: ${describeTotals(totals, 'expired before the restore')} restored into ${where}\n`);
  } catch (error) {
    throw blobError(error, where);
  }
}
