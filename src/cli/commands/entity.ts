// One entity at a time: `cerulean get TABLE PK RK`, `cerulean put TABLE [JSON]`,
// `cerulean delete TABLE PK RK`. An entity is one JSON line in the format of `export` (every
// property annotated, values exact), with its ETag as `odata.etag`; `put` reads the same line, so
// `cerulean get … | cerulean put T` copies an entity. The JSON is an argument or, without one
// (or with `-`), stdin: arguments suit short entities, stdin long ones and pipes.
import type { Command } from 'commander';
import { RestError } from '@azure/data-tables';
import { type CliCommand, CliError, connectionOption } from '../command.js';
import { readStdin } from '../stdin.js';
import { resolveEndpoint } from '../endpoint.js';
import { decodeJsonLine, encodeJsonLine } from '../formats/jsonl.js';
import { RowError, requireKeys } from '../formats/row.js';
import { fromSdkEntity, toSdkEntity } from '../sdk-entity.js';
import { errorCodeOf, tableError } from '../service-errors.js';

interface EntityOptions {
  connectionString?: string;
  ifMatch?: string;
  mode?: 'upsert' | 'merge' | 'insert';
}

export const getCommand: CliCommand = {
  name: 'get',
  register(program: Command) {
    program
      .command('get')
      .description('print one entity as a JSON line (the format of export, with its odata.etag)')
      .argument('<table>', 'table name')
      .argument('<partitionKey>', 'the PartitionKey')
      .argument('<rowKey>', 'the RowKey')
      .addOption(connectionOption())
      .addHelpText(
        'after',
        '\nExit status: 1 when there is no such entity.\n\nExample:\n  cerulean get People smith 001\n',
      )
      .action((table: string, pk: string, rk: string, options: EntityOptions) => getEntity(table, pk, rk, options));
  },
};

export const putCommand: CliCommand = {
  name: 'put',
  register(program: Command) {
    program
      .command('put')
      .description('store one entity given as a JSON line (as an argument, or on stdin)')
      .argument('<table>', 'table name')
      .argument('[entity]', 'the entity as JSON, with PartitionKey and RowKey (default or "-": read stdin)')
      .option(
        '-m, --mode <mode>',
        'upsert (insert or replace), merge (insert or merge), insert (fail if it exists)',
        'upsert',
      )
      .option('--if-match <etag>', 'replace (or merge) only the entity with this ETag ("*": any existing one)')
      .addOption(connectionOption())
      .addHelpText(
        'after',
        '\nUntyped JSON numbers are typed as the service does: 2 is an Int32, 2.0 or 1e3 a Double.\n' +
          '\nExamples:\n  cerulean put People \'{"PartitionKey":"smith","RowKey":"001","Age":42}\'\n' +
          '  cerulean get People smith 001 | cerulean put PeopleCopy\n',
      )
      .action((table: string, json: string | undefined, options: EntityOptions) => putEntity(table, json, options));
  },
};

export const deleteCommand: CliCommand = {
  name: 'delete',
  register(program: Command) {
    program
      .command('delete')
      .description('delete one entity')
      .argument('<table>', 'table name')
      .argument('<partitionKey>', 'the PartitionKey')
      .argument('<rowKey>', 'the RowKey')
      .option('--if-match <etag>', 'delete only if the entity still has this ETag (default "*": whatever it holds)')
      .addOption(connectionOption())
      .addHelpText(
        'after',
        '\nExit status: 1 when there is no such entity or its ETag differs.\n\nExample:\n  cerulean delete People smith 001\n',
      )
      .action((table: string, pk: string, rk: string, options: EntityOptions) => deleteEntity(table, pk, rk, options));
  },
};

async function getEntity(table: string, partitionKey: string, rowKey: string, options: EntityOptions): Promise<void> {
  const client = resolveEndpoint(options.connectionString).tableClient(table);
  try {
    const entity = await client.getEntity(partitionKey, rowKey, { disableTypeConversion: true });
    const line = encodeJsonLine(fromSdkEntity(entity));
    process.stdout.write(`${line.slice(0, -1)},"odata.etag":${JSON.stringify(entity.etag)}}\n`);
  } catch (error) {
    throw entityError(error, table, partitionKey, rowKey);
  }
}

async function putEntity(table: string, json: string | undefined, options: EntityOptions): Promise<void> {
  if (!['upsert', 'merge', 'insert'].includes(options.mode ?? 'upsert')) {
    throw new CliError(`--mode must be upsert, merge or insert, not '${options.mode}'`, 2);
  }
  if (options.ifMatch !== undefined && options.mode === 'insert')
    throw new CliError('--if-match and --mode insert exclude each other', 2);
  const text = json === undefined || json === '-' ? await readStdin('the entity') : json;
  let entity;
  try {
    const row = decodeJsonLine(text.trim());
    entity = toSdkEntity(row, requireKeys(row));
  } catch (error) {
    if (error instanceof RowError) throw new CliError(`not an entity: ${error.message}`, 2);
    throw error;
  }
  const client = resolveEndpoint(options.connectionString).tableClient(table);
  const updateMode = options.mode === 'merge' ? 'Merge' : 'Replace';
  try {
    if (options.mode === 'insert') await client.createEntity(entity);
    else if (options.ifMatch !== undefined) await client.updateEntity(entity, updateMode, { etag: options.ifMatch });
    else await client.upsertEntity(entity, updateMode);
  } catch (error) {
    throw entityError(error, table, entity.partitionKey, entity.rowKey);
  }
  process.stderr.write(
    `put ${table}: ${JSON.stringify(entity.partitionKey)} ${JSON.stringify(entity.rowKey)} stored\n`,
  );
}

async function deleteEntity(
  table: string,
  partitionKey: string,
  rowKey: string,
  options: EntityOptions,
): Promise<void> {
  const client = resolveEndpoint(options.connectionString).tableClient(table);
  try {
    await client.deleteEntity(partitionKey, rowKey, { etag: options.ifMatch ?? '*' });
  } catch (error) {
    throw entityError(error, table, partitionKey, rowKey);
  }
  process.stderr.write(`delete ${table}: ${JSON.stringify(partitionKey)} ${JSON.stringify(rowKey)} deleted\n`);
}

function entityError(error: unknown, table: string, partitionKey: string, rowKey: string): Error {
  const keys = `${JSON.stringify(partitionKey)} ${JSON.stringify(rowKey)}`;
  const code = errorCodeOf(error);
  if (code === 'ResourceNotFound') return new CliError(`${table} has no entity ${keys}`);
  if (code === 'EntityAlreadyExists')
    return new CliError(`${table} already has an entity ${keys} (--mode upsert replaces it)`);
  if (code === 'UpdateConditionNotSatisfied' || (error instanceof RestError && error.statusCode === 412)) {
    return new CliError(`${table} entity ${keys} has another ETag now (changed since it was read)`);
  }
  return tableError(error, table);
}
