// cerulean copy <source> <destination>: tables, or a whole account, between any two endpoints
// (Azure, Azurite, Cerulean), ending with a count check per table and a value-by-value comparison
// of a sample of its entities (--verify); and containers with their blobs (--container).
import type { TableClient } from '@azure/data-tables';
import { type Command, Option } from 'commander';
import { resolveBlobEndpoint } from '../blob-endpoint.js';
import { blobError } from '../blob-errors.js';
import { type CliCommand, CliError, formatCount, wholeNumber } from '../command.js';
import { copyContainer, describeContainerCopy } from '../container-copy.js';
import { type Endpoint, resolveEndpoint } from '../endpoint.js';
import { encodeJsonLine } from '../formats/jsonl.js';
import type { Row } from '../formats/row.js';
import { Interruption, interruptedError } from '../interrupt.js';
import { startProgress } from '../progress.js';
import { listTableNames } from '../table-backup.js';
import { RejectsFile } from '../rejects.js';
import { countEntities, scanPages } from '../scan.js';
import { fromSdkEntity } from '../sdk-entity.js';
import { errorCodeOf, tableError } from '../service-errors.js';
import { EntityWriter, type WriteMode, writeModes } from '../writer.js';
import { collect } from './account-options.js';
import { createTableIfMissing } from './import.js';

interface CopyOptions {
  table: string[];
  container: string[];
  mode: WriteMode;
  rejects: string;
  skipExisting?: boolean;
  verify: number;
}

/** Entities compared value by value after a table's count check, unless --verify says otherwise. */
const verifyDefault = 100;

export const copyCommand: CliCommand = {
  name: 'copy',
  register(program: Command) {
    program
      .command('copy')
      .description('copy tables or a whole account between two endpoints, then compare counts and a sample of values')
      .argument('<source>', 'connection string or SAS URL to copy from')
      .argument('<destination>', 'connection string or SAS URL to copy to')
      .option('-t, --table <name>', 'a table to copy (repeat for more; default every table)', collect, [])
      .option(
        '--container <name>',
        'a container to copy with its blobs, through the Blob endpoints (repeat for more; then tables only if -t)',
        collect,
        [],
      )
      .addOption(
        new Option('-m, --mode <mode>', 'how entities are written: insert, upsert (replace) or merge')
          .choices(writeModes)
          .default('upsert'),
      )
      .option('--rejects <file>', 'entities the destination refused, with the reason', 'copy.rejects.jsonl')
      .option('--skip-existing', 'leave entities the destination has already as they are (resume an interrupted copy)')
      .option(
        '--verify <n>',
        'entities per table read back and compared value by value (a sample; 0: none)',
        wholeNumber('--verify', 0),
        verifyDefault,
      )
      .addHelpText(
        'after',
        '\nAfter each table, the destination is counted, and --verify entities (spread over the table) are read back\n' +
          'and compared value by value: a destination that stores a value differently (Azurite keeps -0.0 as 0)\n' +
          'is reported, not passed. Ctrl-C stops after the requests under way and says what was copied.\n' +
          '\nExit status: 0 when every table has as many entities at the destination as were read from the source\n' +
          'and every compared entity holds the same values; 130 when interrupted.\n' +
          '\n--container copies a container (metadata, public access, ACL) and its block and append blobs (content,\n' +
          'content headers, metadata), streamed; the connection strings then need a BlobEndpoint. Each is checked:\n' +
          'every blob copied is at the destination with its size.\n' +
          '\nExample:\n  cerulean copy "$AZURE_CONNECTION_STRING" UseDevelopmentStorage=true --table People\n' +
          '  cerulean copy "$AZURE_STORAGE_CONNECTION_STRING" UseDevelopmentStorage=true --container photos\n',
      )
      .action((source: string, destination: string, options: CopyOptions) => copy(source, destination, options));
  },
};

async function copy(sourceText: string, destinationText: string, options: CopyOptions): Promise<void> {
  if (options.container.length > 0) {
    await copyContainers(sourceText, destinationText, options.container);
    if (options.table.length === 0) return;
  }
  const source = resolveEndpoint(sourceText);
  const destination = resolveEndpoint(destinationText);
  if (options.skipExisting && options.mode !== 'upsert' && options.mode !== 'insert') {
    throw new CliError('--skip-existing inserts what is missing: it does not go with --mode merge', 2);
  }
  const tables = options.table.length > 0 ? options.table : await listTables(source);
  if (destination.namedTable !== undefined && tables.length !== 1) {
    throw new CliError(
      `the destination names table ${destination.namedTable}: copy one table into it, not ${tables.length}`,
      2,
    );
  }
  const rejects = new RejectsFile(options.rejects, options.skipExisting);
  const interruption = new Interruption('copy');
  const failed = { count: [] as string[], value: [] as string[] };
  try {
    for (const table of tables) {
      const outcome = await copyTable(source, destination, table, options, rejects, interruption);
      if (outcome === 'interrupted') {
        const done = tables.indexOf(table);
        throw interruptedError(
          `${done} of ${tables.length} table(s) copied, ${table} in part; run the same copy with --skip-existing to finish`,
        );
      }
      if (outcome !== 'ok') failed[outcome].push(table);
    }
  } finally {
    interruption.dispose();
    rejects.close();
  }
  if (rejects.count > 0)
    process.stderr.write(
      `copy: ${formatCount(rejects.count)} entities refused by the destination, see ${rejects.file}\n`,
    );
  const failures = (['count', 'value'] as const).filter((check) => failed[check].length > 0);
  if (failures.length > 0)
    throw new CliError(failures.map((check) => `${check} check failed for ${failed[check].join(', ')}`).join('; '));
  const verified = options.verify > 0 ? ', sampled values match' : '';
  process.stderr.write(`copy: ${tables.length} table(s) copied, counts match${verified}\n`);
}

async function copyContainers(sourceText: string, destinationText: string, names: string[]): Promise<void> {
  const source = resolveBlobEndpoint(sourceText);
  const destination = resolveBlobEndpoint(destinationText);
  const interruption = new Interruption('copy');
  const failed: string[] = [];
  try {
    for (const name of names) {
      const copied = await copyContainer(source, destination, name, interruption).catch((error: unknown) => {
        throw blobError(error, `container ${name}`);
      });
      process.stdout.write(describeContainerCopy(name, copied));
      if (copied.interrupted) {
        const done = names.indexOf(name);
        throw interruptedError(`${done} of ${names.length} container(s) copied, ${name} in part; run the copy again`);
      }
      if (copied.differences.length > 0) failed.push(name);
    }
  } finally {
    interruption.dispose();
  }
  if (failed.length > 0) throw new CliError(`size check failed for ${failed.join(', ')}`);
  process.stderr.write(`copy: ${names.length} container(s) copied, sizes match\n`);
}

async function listTables(endpoint: Endpoint): Promise<string[]> {
  if (endpoint.namedTable !== undefined) return [endpoint.namedTable];
  return listTableNames(endpoint);
}

/** Copies one table and checks it: 'ok', the check that failed, or 'interrupted'. */
async function copyTable(
  source: Endpoint,
  destination: Endpoint,
  table: string,
  options: CopyOptions,
  rejects: RejectsFile,
  interruption: Interruption,
): Promise<'ok' | 'count' | 'value' | 'interrupted'> {
  // A table SAS URL as destination names the table to write (it cannot create tables).
  const target = destination.namedTable ?? table;
  if (destination.namedTable === undefined) await createTableIfMissing(destination.service(false), table);
  const progress = startProgress(`copy ${table}`);
  const mode = options.skipExisting ? 'insert' : options.mode;
  const writer = new EntityWriter(destination.tableClient(target, false), mode, rejects, {
    skipExisting: options.skipExisting,
    onStored: (n) => progress.update(n),
  });
  const sample = new Sample(options.verify);
  let read = 0;
  try {
    for await (const page of scanPages(source.tableClient(table))) {
      if (interruption.requested) break;
      read += page.length;
      for (const row of page) {
        sample.offer(row);
        await writer.add(row, undefined, encodeJsonLine(row));
      }
    }
    if (interruption.requested) await writer.abandon();
    else await writer.finish();
  } catch (error) {
    throw tableError(error, table);
  }
  const skipped = writer.skipped > 0 ? `, ${formatCount(writer.skipped)} existing skipped` : '';
  process.stderr.write(
    `copy ${table}: ${progress.finish().replace(/^[\d,]+ entities/, `${formatCount(writer.stored)} entities stored${skipped}`)}\n`,
  );
  if (interruption.requested) return 'interrupted';
  return checkTable(destination, target, table, read, sample.rows);
}

async function checkTable(
  destination: Endpoint,
  target: string,
  table: string,
  read: number,
  sample: readonly Row[],
): Promise<'ok' | 'count' | 'value'> {
  let counted: number;
  let differences: string[];
  try {
    counted = await countEntities(destination.tableClient(target));
    differences = await compareValues(destination.tableClient(target), sample);
  } catch (error) {
    throw tableError(error, target);
  }
  const same = read === counted;
  const compared = sample.length > 0 ? `, ${formatCount(sample.length)} compared` : '';
  const verdict = same && differences.length === 0 ? '' : same ? ' VALUES DIFFER' : ' MISMATCH';
  process.stdout.write(
    `${table}: ${formatCount(read)} read, ${formatCount(counted)} at the destination${compared}${verdict}\n`,
  );
  for (const difference of differences.slice(0, 5)) process.stdout.write(`  ${difference}\n`);
  if (differences.length > 5) process.stdout.write(`  … and ${differences.length - 5} more\n`);
  return !same ? 'count' : differences.length > 0 ? 'value' : 'ok';
}

/** Reads each sampled entity back from `client`; one line per entity that differs. */
async function compareValues(client: TableClient, sample: readonly Row[]): Promise<string[]> {
  const differences: string[] = [];
  for (const row of sample) {
    const keys = `${JSON.stringify(row.partitionKey)} ${JSON.stringify(row.rowKey)}`;
    let copied: Row;
    try {
      copied = fromSdkEntity(await client.getEntity(row.partitionKey!, row.rowKey!, { disableTypeConversion: true }));
    } catch (error) {
      if (errorCodeOf(error) === 'ResourceNotFound') {
        differences.push(`${keys}: missing at the destination`);
        continue;
      }
      throw error;
    }
    const names = new Set([...row.properties.keys(), ...copied.properties.keys()]);
    for (const name of names) {
      const [was, is] = [row.properties.get(name), copied.properties.get(name)];
      if (was?.type === is?.type && was?.value === is?.value) continue;
      const show = (value: typeof was) => (value === undefined ? 'absent' : `${value.value} (${value.type})`);
      differences.push(`${keys} ${name}: ${show(was)} at the source, ${show(is)} at the destination`);
    }
  }
  return differences;
}

/** A uniform sample of at most `size` rows of a stream (reservoir sampling, seeded for repeatable runs). */
class Sample {
  readonly rows: Row[] = [];
  private seen = 0;
  private state = 0x9e3779b9;

  constructor(private readonly size: number) {}

  offer(row: Row): void {
    this.seen++;
    if (this.rows.length < this.size) {
      this.rows.push(row);
      return;
    }
    const at = this.random() % this.seen;
    if (at < this.size) this.rows[at] = row;
  }

  /** xorshift32: enough to spread the sample, no cryptography needed. */
  private random(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state;
  }
}
