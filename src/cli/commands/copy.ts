// cerulean copy <source> <destination>: tables, or a whole account, between any two endpoints
// (Azure, Azurite, Cerulean), ending with a count check per table.
import { type Command, Option } from 'commander';
import { type CliCommand, CliError, formatCount } from '../command.js';
import { type Endpoint, resolveEndpoint } from '../endpoint.js';
import { encodeJsonLine } from '../formats/jsonl.js';
import { startProgress } from '../progress.js';
import { RejectsFile } from '../rejects.js';
import { countEntities, scanPages } from '../scan.js';
import { tableError } from '../service-errors.js';
import { EntityWriter, type WriteMode, writeModes } from '../writer.js';
import { createTableIfMissing } from './import.js';

interface CopyOptions {
  table: string[];
  mode: WriteMode;
  rejects: string;
}

export const copyCommand: CliCommand = {
  name: 'copy',
  register(program: Command) {
    program
      .command('copy')
      .description('copy tables or a whole account between two endpoints, then compare entity counts')
      .argument('<source>', 'connection string or SAS URL to copy from')
      .argument('<destination>', 'connection string or SAS URL to copy to')
      .option('-t, --table <name>', 'a table to copy (repeat for more; default every table)', collect, [])
      .addOption(
        new Option('-m, --mode <mode>', 'how entities are written: insert, upsert (replace) or merge')
          .choices(writeModes)
          .default('upsert'),
      )
      .option('--rejects <file>', 'entities the destination refused, with the reason', 'copy.rejects.jsonl')
      .addHelpText(
        'after',
        '\nExit status: 0 when every table has as many entities at the destination as were read from the source.\n' +
          '\nExample:\n  cerulean copy "$AZURE_CONNECTION_STRING" UseDevelopmentStorage=true --table People\n',
      )
      .action((source: string, destination: string, options: CopyOptions) => copy(source, destination, options));
  },
};

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

async function copy(sourceText: string, destinationText: string, options: CopyOptions): Promise<void> {
  const source = resolveEndpoint(sourceText);
  const destination = resolveEndpoint(destinationText);
  const tables = options.table.length > 0 ? options.table : await listTables(source);
  if (destination.namedTable !== undefined && tables.length !== 1) {
    throw new CliError(
      `the destination names table ${destination.namedTable}: copy one table into it, not ${tables.length}`,
      2,
    );
  }
  const rejects = new RejectsFile(options.rejects);
  const mismatches: string[] = [];
  try {
    for (const table of tables) {
      const { read, counted } = await copyTable(source, destination, table, options.mode, rejects);
      const same = read === counted;
      process.stdout.write(
        `${table}: ${formatCount(read)} read, ${formatCount(counted)} at the destination${same ? '' : ' MISMATCH'}\n`,
      );
      if (!same) mismatches.push(table);
    }
  } finally {
    rejects.close();
  }
  if (rejects.count > 0)
    process.stderr.write(
      `copy: ${formatCount(rejects.count)} entities refused by the destination, see ${rejects.file}\n`,
    );
  if (mismatches.length > 0) throw new CliError(`count check failed for ${mismatches.join(', ')}`);
  process.stderr.write(`copy: ${tables.length} table(s) copied, counts match\n`);
}

async function listTables(endpoint: Endpoint): Promise<string[]> {
  if (endpoint.namedTable !== undefined) return [endpoint.namedTable];
  const names: string[] = [];
  try {
    for await (const table of endpoint.service().listTables()) names.push(table.name!);
  } catch (error) {
    throw tableError(error, endpoint.label);
  }
  return names;
}

async function copyTable(
  source: Endpoint,
  destination: Endpoint,
  table: string,
  mode: WriteMode,
  rejects: RejectsFile,
): Promise<{ read: number; counted: number }> {
  // A table SAS URL as destination names the table to write (it cannot create tables).
  const target = destination.namedTable ?? table;
  if (destination.namedTable === undefined) await createTableIfMissing(destination.service(false), table);
  const progress = startProgress(`copy ${table}`);
  const writer = new EntityWriter(destination.tableClient(target, false), mode, rejects, (n) => progress.update(n));
  let read = 0;
  try {
    for await (const page of scanPages(source.tableClient(table))) {
      read += page.length;
      for (const row of page) await writer.add(row, undefined, encodeJsonLine(row));
    }
    await writer.finish();
  } catch (error) {
    throw tableError(error, table);
  }
  process.stderr.write(`copy ${table}: ${progress.finish()}\n`);
  let counted: number;
  try {
    counted = await countEntities(destination.tableClient(target));
  } catch (error) {
    throw tableError(error, target);
  }
  return { read, counted };
}
