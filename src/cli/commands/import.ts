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
import { EntityWriter, type WriteMode, writeModes } from '../writer.js';

interface ImportOptions {
  format?: string;
  mode: WriteMode;
  createTable?: boolean;
  rejects?: string;
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
      .addOption(connectionOption())
      .addHelpText(
        'after',
        '\nExit status: 0 when every row was stored, 1 when some were rejected or the import failed.\n' +
          '\nExample:\n  cerulean import People people.typed.csv --create-table --mode upsert\n',
      )
      .action((table: string, file: string, options: ImportOptions) => importFile(table, file, options));
  },
};

async function importFile(table: string, file: string, options: ImportOptions): Promise<void> {
  const format = chooseFormat(options.format, file);
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const endpoint = resolveEndpoint(options.connectionString);
  if (options.createTable) await createTableIfMissing(endpoint.service(false), table);
  const rejects = new RejectsFile(options.rejects ?? `${file}.rejects.jsonl`);
  fs.rmSync(rejects.file, { force: true }); // an old rejects file would mislead
  const progress = startProgress(`import ${table}`, size);
  let position = 0;
  const writer = new EntityWriter(endpoint.tableClient(table, false), options.mode, rejects, (n) =>
    progress.update(n, position),
  );
  try {
    for await (const { row, line, input } of readRows(file, format, (bytes) => (position = bytes))) {
      await writer.add(row, line, input);
    }
    await writer.finish();
  } catch (error) {
    throw tableError(error, table);
  } finally {
    rejects.close();
  }
  const summary = progress.finish().replace(/^[\d,]+ entities/, `${formatCount(writer.stored)} entities stored`);
  process.stderr.write(`import ${table}: ${summary}\n`);
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
