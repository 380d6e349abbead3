// cerulean stats <table>: entities, partitions, the largest partitions, and the size on disk.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { type CliCommand, CliError, connectionOption, formatCount, wholeNumber } from '../command.js';
import { resolveEndpoint } from '../endpoint.js';
import { startProgress } from '../progress.js';
import { scanPages } from '../scan.js';
import { tableError } from '../service-errors.js';

interface StatsOptions {
  top: number;
  location?: string;
  json?: boolean;
  connectionString?: string;
}

interface Partition {
  readonly partitionKey: string;
  readonly entities: number;
}

export const statsCommand: CliCommand = {
  name: 'stats',
  register(program: Command) {
    program
      .command('stats')
      .description('count the entities and partitions of a table and name the largest partitions')
      .argument('<table>', 'table name')
      .option('--top <n>', 'how many of the largest partitions to list', wholeNumber('--top', 0), 10)
      .option('--location <dir>', "the server's data directory, to report the size on disk")
      .option('--json', 'one JSON document for scripts')
      .addOption(connectionOption())
      .addHelpText('after', '\nExample:\n  cerulean stats People --location ./data\n')
      .action((table: string, options: StatsOptions) => stats(table, options));
  },
};

async function stats(table: string, options: StatsOptions): Promise<void> {
  const client = resolveEndpoint(options.connectionString).tableClient(table);
  const progress = startProgress(`stats ${table}`);
  let entities = 0;
  let partitions = 0;
  const largest: Partition[] = []; // sorted by size, descending, at most options.top
  let currentKey: string | undefined;
  let currentEntities = 0;
  const closePartition = () => {
    if (currentKey === undefined) return;
    partitions++;
    keepLargest(largest, { partitionKey: currentKey, entities: currentEntities }, options.top);
  };
  try {
    // Entities come in key order, so a partition is a run of rows: counting needs no per-partition memory.
    for await (const page of scanPages(client, { select: ['PartitionKey'] })) {
      for (const row of page) {
        entities++;
        if (row.partitionKey === currentKey) currentEntities++;
        else {
          closePartition();
          currentKey = row.partitionKey ?? '';
          currentEntities = 1;
        }
      }
      progress.update(page.length);
    }
    closePartition();
  } catch (error) {
    throw tableError(error, table);
  }
  progress.finish();
  let sizeOnDiskBytes: number | undefined;
  try {
    sizeOnDiskBytes = options.location === undefined ? undefined : directoryBytes(options.location);
  } catch (error) {
    throw new CliError(`cannot measure ${options.location}: ${(error as Error).message}`);
  }
  const result = { table, entities, partitions, largestPartitions: largest, sizeOnDiskBytes: sizeOnDiskBytes ?? null };
  if (options.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const lines = [
    `table:        ${table}`,
    `entities:     ${formatCount(entities)}`,
    `partitions:   ${formatCount(partitions)}`,
    sizeOnDiskBytes === undefined
      ? 'size on disk: unknown (pass --location with the data directory)'
      : `size on disk: ${formatCount(sizeOnDiskBytes)} bytes (${options.location}, all tables)`,
  ];
  if (largest.length > 0) {
    lines.push(`largest partitions:`);
    for (const partition of largest)
      lines.push(`  ${formatCount(partition.entities).padStart(12)}  ${JSON.stringify(partition.partitionKey)}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

function keepLargest(largest: Partition[], partition: Partition, top: number): void {
  if (top === 0 || (largest.length === top && largest[top - 1]!.entities >= partition.entities)) return;
  let at = largest.findIndex((kept) => kept.entities < partition.entities);
  if (at === -1) at = largest.length;
  largest.splice(at, 0, partition);
  if (largest.length > top) largest.pop();
}

/** Bytes of every file under `dir` (the database, its write-ahead log, anything else there). */
function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? directoryBytes(full) : fs.statSync(full).size;
  }
  return total;
}
