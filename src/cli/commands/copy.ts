// cerulean copy <source> <destination>: an account (tables, queues, blobs) or some of it between any two
// endpoints (Azure, Azurite, Cerulean), ending with a check per table (count, a value-by-value comparison
// of a sample, or checksums with --verify), per queue and per container (src/cli/account-copy.ts).
import { createHash } from 'node:crypto';
import type { TableClient } from '@azure/data-tables';
import { type Command, Option } from 'commander';
import {
  chooseServices,
  copyContainers,
  copyQueues,
  parseServices,
  type CopyService,
  type ServiceOutcome,
} from '../account-copy.js';
import { type CliCommand, CliError, formatCount, wholeNumber } from '../command.js';
import { type Endpoint, resolveEndpoint } from '../endpoint.js';
import { encodeJsonLine } from '../formats/jsonl.js';
import type { Row } from '../formats/row.js';
import { Interruption, interruptedError } from '../interrupt.js';
import { queueMessageModes, type QueueMessageMode } from '../queue-copy.js';
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
  queue: string[];
  only?: CopyService[];
  queueMessages: QueueMessageMode;
  mode: WriteMode;
  rejects: string;
  skipExisting?: boolean;
  /** A sample size, or true: every entity, blob and message checked. */
  verify: number | true;
}

/** Entities compared value by value after a table's count check, unless --verify says otherwise. */
const verifyDefault = 100;

export const copyCommand: CliCommand = {
  name: 'copy',
  register(program: Command) {
    program
      .command('copy')
      .description('copy an account (tables, queues, blobs) or some of it between two endpoints, then check it')
      .argument('<source>', 'connection string or SAS URL to copy from')
      .argument('<destination>', 'connection string or SAS URL to copy to')
      .option('--only <services>', 'only these services, comma-separated: tables, queues, blobs', parseServices)
      .option('-t, --table <name>', 'a table to copy (repeat for more; then only what is named)', collect, [])
      .option('--queue <name>', 'a queue to copy (repeat for more; then only what is named)', collect, [])
      .option('--container <name>', 'a container to copy (repeat for more; then only what is named)', collect, [])
      .addOption(
        new Option(
          '--queue-messages <how>',
          'peek: the first 32 visible (source untouched); all: every visible one; none',
        )
          .choices(queueMessageModes)
          .default('peek'),
      )
      .addOption(
        new Option('-m, --mode <mode>', 'how entities are written: insert, upsert (replace) or merge')
          .choices(writeModes)
          .default('upsert'),
      )
      .option('--rejects <file>', 'entities the destination refused, with the reason', 'copy.rejects.jsonl')
      .option('--skip-existing', 'leave entities the destination has already as they are (resume an interrupted copy)')
      .option(
        '--verify [n]',
        'alone: check everything (table checksums, every blob read back); n: entities per table compared (0: none)',
        wholeNumber('--verify', 0),
        verifyDefault,
      )
      .addHelpText('after', copyHelp)
      .action((source: string, destination: string, options: CopyOptions) => copy(source, destination, options));
  },
};

const copyHelp =
  '\nWithout -t, --queue or --container, every table, queue and container both connection strings reach is copied\n' +
  '(--only narrows it). After each table the destination is counted and --verify entities (spread over the table)\n' +
  'are read back and compared value by value: a destination that stores a value differently (Azurite keeps -0.0\n' +
  "as 0) is reported, not passed. A queue gets its metadata and its visible messages' texts (not their ids,\n" +
  'insertion times or dequeue counts; see docs/cli.md). A container gets its metadata, public access and ACL, and\n' +
  'its blobs (content, content headers, metadata, tiers where the destination has them); a blob already at the\n' +
  'destination with the same size and MD5 is skipped, so running a copy again resumes it. Ctrl-C stops after the\n' +
  'requests under way and says what was copied.\n' +
  '\nExit status: 0 when every check passes; 1 when one fails; 130 when interrupted.\n' +
  '\nExample:\n  cerulean copy "$AZURE_STORAGE_CONNECTION_STRING" UseDevelopmentStorage=true --verify\n' +
  '  cerulean copy "$AZURE_CONNECTION_STRING" UseDevelopmentStorage=true --table People\n' +
  '  cerulean copy "$AZURE_STORAGE_CONNECTION_STRING" UseDevelopmentStorage=true --only blobs\n';

async function copy(sourceText: string, destinationText: string, options: CopyOptions): Promise<void> {
  const named = { tables: options.table, queues: options.queue, blobs: options.container };
  const { services, notes } = chooseServices(sourceText, destinationText, options.only, named);
  if (options.skipExisting && options.mode !== 'upsert' && options.mode !== 'insert') {
    throw new CliError('--skip-existing inserts what is missing: it does not go with --mode merge', 2);
  }
  const interruption = new Interruption('copy');
  const outcomes: ServiceOutcome[] = [];
  try {
    for (const service of services) {
      const outcome =
        service === 'tables'
          ? await copyTables(sourceText, destinationText, options, interruption)
          : service === 'queues'
            ? await copyQueues(sourceText, destinationText, {
                names: options.queue,
                mode: options.queueMessages,
                interruption,
              })
            : await copyContainers(sourceText, destinationText, {
                names: options.container,
                verifyContent: options.verify === true,
                interruption,
              });
      if (outcome.interrupted !== undefined) throw interruptedError(outcome.interrupted);
      outcomes.push(outcome);
    }
  } finally {
    interruption.dispose();
  }
  for (const line of [...notes, ...outcomes.map((outcome) => `copy: ${outcome.summary}`)])
    process.stderr.write(`${line}\n`);
  const failures = outcomes.flatMap((outcome) => outcome.failed);
  if (failures.length > 0) throw new CliError(failures.join('; '));
}

async function copyTables(
  sourceText: string,
  destinationText: string,
  options: CopyOptions,
  interruption: Interruption,
): Promise<ServiceOutcome> {
  const source = resolveEndpoint(sourceText);
  const destination = resolveEndpoint(destinationText);
  const tables = options.table.length > 0 ? options.table : await listTables(source);
  if (destination.namedTable !== undefined && tables.length !== 1) {
    throw new CliError(
      `the destination names table ${destination.namedTable}: copy one table into it, not ${tables.length}`,
      2,
    );
  }
  const rejects = new RejectsFile(options.rejects, options.skipExisting);
  const failed = { count: [] as string[], value: [] as string[], checksum: [] as string[] };
  let entities = 0;
  try {
    for (const table of tables) {
      const outcome = await copyTable(source, destination, table, options, rejects, interruption);
      if (outcome === 'interrupted') {
        const done = tables.indexOf(table);
        const rest = 'run the same copy with --skip-existing to finish';
        return {
          summary: '',
          failed: [],
          interrupted: `${done} of ${tables.length} table(s) copied, ${table} in part; ${rest}`,
        };
      }
      entities += outcome.read;
      if (outcome.failed !== undefined) failed[outcome.failed].push(table);
    }
  } finally {
    rejects.close();
  }
  if (rejects.count > 0)
    process.stderr.write(
      `copy: ${formatCount(rejects.count)} entities refused by the destination, see ${rejects.file}\n`,
    );
  const failures = (['count', 'value', 'checksum'] as const).filter((check) => failed[check].length > 0);
  const checked = options.verify === true ? ', checksums match' : options.verify > 0 ? ', sampled values match' : '';
  const verdict = failures.length === 0 ? `, counts match${checked}` : '';
  const summary = `${tables.length} table(s) copied${verdict} (${formatCount(entities)} entities)`;
  return { summary, failed: failures.map((check) => `${check} check failed for ${failed[check].join(', ')}`) };
}

async function listTables(endpoint: Endpoint): Promise<string[]> {
  if (endpoint.namedTable !== undefined) return [endpoint.namedTable];
  return listTableNames(endpoint);
}

type TableCheck = 'count' | 'value' | 'checksum';

/** Copies one table and checks it: the entities read and the check that failed, or 'interrupted'. */
async function copyTable(
  source: Endpoint,
  destination: Endpoint,
  table: string,
  options: CopyOptions,
  rejects: RejectsFile,
  interruption: Interruption,
): Promise<{ read: number; failed?: TableCheck } | 'interrupted'> {
  // A table SAS URL as destination names the table to write (it cannot create tables).
  const target = destination.namedTable ?? table;
  if (destination.namedTable === undefined) await createTableIfMissing(destination.service(false), table);
  const progress = startProgress(`copy ${table}`);
  const mode = options.skipExisting ? 'insert' : options.mode;
  const writer = new EntityWriter(destination.tableClient(target, false), mode, rejects, {
    skipExisting: options.skipExisting,
    onStored: (n) => progress.update(n),
  });
  const sample = new Sample(options.verify === true ? verifyDefault : options.verify);
  const checksum = new TableChecksum();
  let read = 0;
  try {
    for await (const page of scanPages(source.tableClient(table))) {
      if (interruption.requested) break;
      read += page.length;
      for (const row of page) {
        sample.offer(row);
        checksum.add(row);
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
  const failed = await checkTable(
    destination,
    target,
    table,
    read,
    sample.rows,
    options.verify === true ? checksum : undefined,
  );
  return failed === 'ok' ? { read } : { read, failed };
}

/** SHA-256 over a table's entities in key order, each as its export line without Timestamp. */
class TableChecksum {
  private readonly hash = createHash('sha256');

  add(row: Row): void {
    this.hash.update(`${encodeJsonLine({ ...row, timestamp: undefined })}\n`);
  }

  hex(): string {
    return this.hash.digest('hex');
  }

  static async of(client: TableClient): Promise<string> {
    const checksum = new TableChecksum();
    for await (const page of scanPages(client)) for (const row of page) checksum.add(row);
    return checksum.hex();
  }
}

async function checkTable(
  destination: Endpoint,
  target: string,
  table: string,
  read: number,
  sample: readonly Row[],
  checksum: TableChecksum | undefined,
): Promise<'ok' | TableCheck> {
  let counted: number;
  let differences: string[];
  let sameChecksum = true;
  try {
    counted = await countEntities(destination.tableClient(target));
    differences = await compareValues(destination.tableClient(target), sample);
    if (checksum !== undefined)
      sameChecksum = (await TableChecksum.of(destination.tableClient(target))) === checksum.hex();
  } catch (error) {
    throw tableError(error, target);
  }
  const same = read === counted;
  const compared = sample.length > 0 ? `, ${formatCount(sample.length)} compared` : '';
  const summed = checksum === undefined ? '' : sameChecksum ? ', checksums match' : ', CHECKSUMS DIFFER';
  const verdict = same && differences.length === 0 ? '' : same ? ' VALUES DIFFER' : ' MISMATCH';
  process.stdout.write(
    `${table}: ${formatCount(read)} read, ${formatCount(counted)} at the destination${compared}${summed}${verdict}\n`,
  );
  for (const difference of differences.slice(0, 5)) process.stdout.write(`  ${difference}\n`);
  if (differences.length > 5) process.stdout.write(`  … and ${differences.length - 5} more\n`);
  return !same ? 'count' : differences.length > 0 ? 'value' : sameChecksum ? 'ok' : 'checksum';
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
