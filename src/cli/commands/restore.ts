// cerulean restore <file> --location DIR: a backup back into an empty data directory.
import type { Command } from 'commander';
import { restoreData } from '../../storage/backup.js';
import { type CliCommand, formatCount, locationOption } from '../command.js';
import { dataSourceOf, engineError } from './backup.js';

interface RestoreOptions {
  location?: string;
  database?: string;
}

export const restoreCommand: CliCommand = {
  name: 'restore',
  register(program: Command) {
    program
      .command('restore')
      .description('put a backup into an empty data directory; then start the server on it')
      .argument('<file>', 'a file written by cerulean backup')
      .addOption(locationOption('the data directory to create; must be empty or absent'))
      .option('--database <url>', 'a database URL instead (postgres://…: use pg_restore)')
      .addHelpText(
        'after',
        '\nExample:\n  cerulean restore nightly.sqlite --location ./restored && cerulean --location ./restored\n',
      )
      .action((file: string, options: RestoreOptions) => restore(file, options));
  },
};

function restore(file: string, options: RestoreOptions): void {
  const target = dataSourceOf(options);
  try {
    const { tables } = restoreData(file, target);
    process.stderr.write(
      `restore: ${formatCount(tables)} tables restored into ${'location' in target ? target.location : 'the database'}\n`,
    );
  } catch (error) {
    throw engineError(error);
  }
}
