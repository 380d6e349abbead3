// cerulean tables: the tables of an account, optionally with their entity counts.
import type { Command } from 'commander';
import { type CliCommand, connectionOption, formatCount } from '../command.js';
import { resolveEndpoint } from '../endpoint.js';
import { countEntities } from '../scan.js';
import { tableError } from '../service-errors.js';

interface TablesOptions {
  count?: boolean;
  json?: boolean;
  connectionString?: string;
}

export const tablesCommand: CliCommand = {
  name: 'tables',
  register(program: Command) {
    program
      .command('tables')
      .description('list the tables of the account')
      .option('--count', 'also count the entities of each table (reads every key)')
      .option('--json', 'one JSON document for scripts')
      .addOption(connectionOption())
      .addHelpText('after', '\nExample:\n  cerulean tables --count\n')
      .action((options: TablesOptions) => listTables(options));
  },
};

async function listTables(options: TablesOptions): Promise<void> {
  const endpoint = resolveEndpoint(options.connectionString);
  const tables: { name: string; entities?: number }[] = [];
  try {
    for await (const table of endpoint.service().listTables()) {
      const name = table.name!;
      tables.push(options.count ? { name, entities: await countEntities(endpoint.tableClient(name)) } : { name });
    }
  } catch (error) {
    throw tableError(error, endpoint.label);
  }
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ tables })}\n`);
    return;
  }
  const width = Math.max(0, ...tables.map((table) => table.name.length));
  for (const table of tables) {
    process.stdout.write(
      table.entities === undefined
        ? `${table.name}\n`
        : `${table.name.padEnd(width)}  ${formatCount(table.entities)}\n`,
    );
  }
}
