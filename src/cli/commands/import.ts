// cerulean import <table> <file>: rows of a JSON lines, typed CSV or CSV file into a table, in entity
// group transactions; rows that cannot be stored go to a rejects file with the reason.
import fs from 'node:fs';
import { type Command, Option } from 'commander';
import { RestError } from '@azure/data-tables';
import { type CliCommand, CliError, connectionOption, formatCount } from '../command.js';
import { resolveEndpoint } from '../endpoint.js';
import { chooseFormat, formatNames } from '../formats/index.js';
import { startProgress } from '../progress.js';
import { readRows } from '../readers.js';
import { RejectsFile } from '../rejects.js';
import { withRetries } from '../retry.js';
import { tableError } from '../service-errors.js';
import { Interruption, interruptedError } from '../interrupt.js';
import { EntityWriter, type WriteMode, groupWindowRows, writeModes } from '../writer.js';

interface ImportOptions {
  format?: string;
  mode: WriteMode;
  createTable?: boolean;
  rejects?: string;
  skipExisting?: boolean;
  connectionString?: string;
}

export const importCommand: CliCommand = {
  name: 'import',
  register(program: Command) {
    program
      .command('import')
      .description('store the rows of a file in a table (entity group transactions of up to 100 entities)')
      .argument('<table>', 'table name')
      .argument('<file>', 'input file')
      .addOption(
        new Option('-f, --format <format>', 'default from the file name: .typed.csv, .csv, else jsonl').choices(
          formatNames,
        ),
      )
      .addOption(
        new Option('-m, --mode <mode>', 'insert (fail on existing), upsert (replace), merge (insert or merge)')
          .choices(writeModes)
          .default('insert'),
      )
      .option('--create-table', 'create the table if it does not exist')
      .option(
        '--rejects <file>',
        'where rows that could not be stored go, with the reason (default <file>.rejects.jsonl)',
      )
      .option(
        '--skip-existing',
        'insert mode: leave entities that exist already as they are (resume an interrupted import)',
      )
      .addOption(connectionOption())
      .addHelpText(
        'after',
        `\nRows are grouped by PartitionKey within a window of the last ${formatCount(groupWindowRows)} rows, so rows that\n` +
          'alternate between partitions still travel in full transactions; a file sorted by PartitionKey needs no window.\n' +
          '\nThe rejects file of an earlier run is never overwritten: move it away or name another with --rejects\n' +
          '(--skip-existing appends to it). Ctrl-C stops after the transactions under way and says how many rows were\n' +
          'stored; run the same command with --skip-existing to store the rest.\n' +
          '\nExit status: 0 when every row was stored, 1 when some were rejected or the import failed, 130 when interrupted.\n' +
          '\nExample:\n  cerulean import People people.typed.csv --create-table --mode upsert\n',
      )
      .action((table: string, file: string, options: ImportOptions) => importFile(table, file, options));
  },
};

async function importFile(table: string, file: string, options: ImportOptions): Promise<void> {
  const format = chooseFormat(options.format, file);
  if (options.skipExisting && options.mode !== 'insert') {
    throw new CliError(`--skip-existing is for --mode insert (--mode ${options.mode} may simply run again)`, 2);
  }
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const endpoint = resolveEndpoint(options.connectionString);
  const rejects = new RejectsFile(options.rejects ?? `${file}.rejects.jsonl`, options.skipExisting);
  if (options.createTable) await createTableIfMissing(endpoint.service(false), table);
  const progress = startProgress(`import ${table}`, size);
  let position = 0;
  const writer = new EntityWriter(endpoint.tableClient(table, false), options.mode, rejects, {
    skipExisting: options.skipExisting,
    onStored: (n) => progress.update(n, position),
  });
  const interruption = new Interruption(`import ${table}`);
  let read = 0;
  let lastLine = 0;
  try {
    for await (const { row, line, input } of readRows(file, format, (bytes) => (position = bytes))) {
      if (interruption.requested) break;
      read++;
      lastLine = line;
      await writer.add(row, line, input);
    }
    if (interruption.requested) await writer.abandon();
    else await writer.finish();
  } catch (error) {
    throw tableError(error, table);
  } finally {
    interruption.dispose();
    rejects.close();
  }
  const skipped = writer.skipped > 0 ? `, ${formatCount(writer.skipped)} existing skipped` : '';
  const summary = progress
    .finish()
    .replace(/^[\d,]+ entities/, `${formatCount(writer.stored)} entities stored${skipped}`);
  process.stderr.write(`import ${table}: ${summary}\n`);
  const rejected = rejects.count > 0 ? `, ${formatCount(rejects.count)} rejected (see ${rejects.file})` : '';
  if (interruption.requested) {
    throw interruptedError(
      `${formatCount(writer.stored)} of the ${formatCount(read)} rows read (to line ${lastLine}) were stored${rejected}; ` +
        'run the same import with --skip-existing to store the rest',
    );
  }
  if (rejects.count > 0) throw new CliError(`${formatCount(rejects.count)} rows rejected, see ${rejects.file}`);
}

/** Creates `table`; one that exists already is fine. */
export async function createTableIfMissing(
  service: import('@azure/data-tables').TableServiceClient,
  table: string,
): Promise<void> {
  try {
    await withRetries(() => service.createTable(table));
  } catch (error) {
    if (error instanceof RestError && error.statusCode === 409) return;
    throw tableError(error, table);
  }
}
