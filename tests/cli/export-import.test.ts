// `cerulean export` and `cerulean import` as a user types them, against a real server process:
// round trips that keep every EDM value exactly, Storage Explorer's typed CSV, the rejects file,
// retries of 503 answers, and the errors and help of every command.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AzureNamedKeyCredential, generateAccountSas, generateTableSas, type TableClient } from '@azure/data-tables';
import { comparableLines, describeRun, extremeEntities, runCli } from '../helpers/cli.js';
import { devAccount, devKey, makeTempDir, removeDir, startServer, type RunningServer } from '../helpers/server.js';
import { freshTable, tableClient, uniqueTableName } from '../helpers/sdk.js';

/** Enough entities in one partition for several transactions of 100, plus other partitions. */
const bulkPartitionEntities = 250;
const bulkOtherPartitions = 30;

describe('cerulean export / import', () => {
  let server: RunningServer;
  let dir: string;
  let source: TableClient;
  let sourceExport: string[];
  const cli = (...args: string[]) => runCli([...args, '--connection-string', server.connectionString], { cwd: dir });

  before(async () => {
    server = await startServer({ inMemory: true });
    dir = makeTempDir('cerulean-cli-');
    source = await freshTable(server, 'src');
    for (const entity of extremeEntities()) await source.createEntity(entity as never);
    const bulk = Array.from({ length: bulkPartitionEntities }, (_, i) => ({
      partitionKey: 'bulk',
      rowKey: String(i).padStart(4, '0'),
      n: i,
    }));
    for (let i = 0; i < bulk.length; i += 100)
      await source.submitTransaction(bulk.slice(i, i + 100).map((entity) => ['create', entity] as const));
    for (let p = 0; p < bulkOtherPartitions; p++)
      await source.createEntity({ partitionKey: `p${p}`, rowKey: 'r', x: p * 1.5 });
    const exported = await cli('export', source.tableName);
    assert.equal(exported.code, 0, describeRun(exported));
    sourceExport = comparableLines(exported.stdout);
  });
  after(async () => {
    await server?.stop();
    if (dir) removeDir(dir);
  });

  test('the export holds every entity with its exact EDM values', () => {
    assert.equal(sourceExport.length, extremeEntities().length + bulkPartitionEntities + bulkOtherPartitions);
    const max = sourceExport.find((line) => line.includes('"RowKey":"max"'))!;
    assert.match(max, /"i64":"9223372036854775807","i64@odata.type":"Edm.Int64"/);
    assert.match(max, /"when":"9999-12-31T23:59:59.9999999Z"/);
    assert.match(max, /"whole":2.0,/);
    const min = sourceExport.find((line) => line.includes('"RowKey":"min"'))!;
    assert.match(min, /"negzero":-0.0,/);
    assert.match(min, /"bytes":"","bytes@odata.type":"Edm.Binary"/);
    assert.match(min, /"text":"","text@odata.type":"Edm.String"/);
    assert.match(min, /"when":"1601-01-01T00:00:00.0000001Z"/);
    const special = sourceExport.find((line) => line.includes('"RowKey":"special"'))!;
    assert.match(special, /"nan":"NaN".*"ninf":"-Infinity"/);
  });

  for (const format of ['jsonl', 'typed-csv'] as const) {
    test(`${format}: export to a file, import into a new table, export again: the same entities`, async () => {
      const file = join(dir, `roundtrip.${format === 'jsonl' ? 'jsonl' : 'typed.csv'}`);
      const exported = await cli('export', source.tableName, '--out', file);
      assert.equal(exported.code, 0, describeRun(exported));
      assert.match(exported.stderr, /export \w+: 284 entities/);
      const target = uniqueTableName('rt');
      const imported = await cli('import', target, file, '--create-table');
      assert.equal(imported.code, 0, describeRun(imported));
      const again = await cli('export', target);
      assert.equal(again.code, 0, describeRun(again));
      assert.deepEqual(comparableLines(again.stdout), sourceExport);
    });
  }

  test('plain csv: keys and values as text, read back as strings', async () => {
    const file = join(dir, 'plain.csv');
    const exported = await cli('export', source.tableName, '--filter', "PartitionKey eq 'p3'", '--out', file);
    assert.equal(exported.code, 0, describeRun(exported));
    assert.equal(
      readFileSync(file, 'utf8'),
      `PartitionKey,RowKey,Timestamp,x\np3,r,${readFileSync(file, 'utf8').split('\n')[1]!.split(',')[2]},4.5\n`,
    );
    const target = uniqueTableName('plain');
    const imported = await cli('import', target, file, '--create-table');
    assert.equal(imported.code, 0, describeRun(imported));
    const got = await tableClient(server, target).getEntity('p3', 'r');
    assert.equal(got['x'], '4.5');
  });

  test('--select and --filter export a query result', async () => {
    const result = await cli(
      'export',
      source.tableName,
      '--filter',
      "PartitionKey eq 'edge'",
      '--select',
      'RowKey,i64',
    );
    assert.equal(result.code, 0, describeRun(result));
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(
      lines.map((line) => line['RowKey']),
      ['max', 'min', 'special'],
    );
    assert.equal(lines[0]!['i64'], '9223372036854775807');
    assert.equal(lines[2]!['i64'], undefined);
    assert.equal(lines[0]!['i32'], undefined);
  });

  test('a .typed.csv as Storage Explorer writes it imports with every type', async () => {
    const file = join(dir, 'explorer.typed.csv');
    writeFileSync(
      file,
      '\ufeffPartitionKey,RowKey,Timestamp,Name,Name@type,Age,Age@type,Big,Big@type,Score,Score@type,Active,Active@type,Born,Born@type,Id,Id@type,Photo,Photo@type\r\n' +
        'people,001,2024-05-01T10:00:00.000Z,"Smith, Ann",Edm.String,42,Edm.Int32,9007199254740993,Edm.Int64,98.5,Edm.Double,true,Edm.Boolean,1990-02-03T04:05:06.000Z,Edm.DateTime,c9da6455-213d-42c9-9a79-3e9149a57833,Edm.Guid,AAEC/w==,Edm.Binary\r\n' +
        'people,002,2024-05-01T10:00:00.000Z,,Edm.String,,,,,,,False,Edm.Boolean,,,,,,\r\n',
    );
    const table = uniqueTableName('explorer');
    const imported = await cli('import', table, file, '--create-table');
    assert.equal(imported.code, 0, describeRun(imported));
    const client = tableClient(server, table);
    const ann = await client.getEntity('people', '001', { disableTypeConversion: true });
    assert.deepEqual(pick(ann), {
      Name: { type: 'String', value: 'Smith, Ann' },
      Age: { type: 'Int32', value: '42' },
      Big: { type: 'Int64', value: '9007199254740993' },
      Score: { type: 'Double', value: '98.5' },
      Active: { type: 'Boolean', value: 'true' },
      Born: { type: 'DateTime', value: '1990-02-03T04:05:06Z' },
      Id: { type: 'Guid', value: 'c9da6455-213d-42c9-9a79-3e9149a57833' },
      Photo: { type: 'Binary', value: 'AAEC/w==' },
    });
    const second = await client.getEntity('people', '002');
    assert.equal(second['Name'], '', 'an empty value typed Edm.String is an empty string');
    assert.equal(second['Active'], false);
    assert.equal('Age' in second, false, 'empty value and type cells: no such property');
  });

  test('bad rows go to the rejects file with reasons; the other rows are stored', async () => {
    const table = await freshTable(server, 'rej');
    await table.createEntity({ partitionKey: 'a', rowKey: 'exists' });
    const file = join(dir, 'bad.jsonl');
    const lines = [
      '{"PartitionKey":"a","RowKey":"1","v":1}',
      'this is not json',
      '{"PartitionKey":"a","RowKey":"2","v":"x","v@odata.type":"Edm.Int32"}',
      '{"PartitionKey":"a","RowKey":"exists"}',
      '{"PartitionKey":"a","RowKey":"3","bad name":1}',
      '{"PartitionKey":"a","RowKey":"4"}',
      '{"RowKey":"no partition key"}',
      '{"PartitionKey":"b","RowKey":"5","big":"9223372036854775808","big@odata.type":"Edm.Int64"}',
      '{"PartitionKey":"b","RowKey":"6"}',
    ];
    writeFileSync(file, lines.join('\n') + '\n');
    const result = await cli('import', table.tableName, file);
    assert.equal(result.code, 1, describeRun(result));
    assert.match(result.stderr, /6 rows rejected, see .*bad\.jsonl\.rejects\.jsonl/);
    const rejects = readFileSync(`${file}.rejects.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { line: number; reason: string; input: string });
    assert.deepEqual(rejects.map((reject) => reject.line).sort(), [2, 3, 4, 5, 7, 8]);
    const reasonOf = (n: number) => rejects.find((reject) => reject.line === n)!.reason;
    assert.match(reasonOf(2), /not valid JSON/);
    assert.match(reasonOf(3), /not a valid Edm.Int32/);
    assert.match(reasonOf(4), /409 EntityAlreadyExists/);
    assert.match(reasonOf(5), /PropertyNameInvalid/);
    assert.match(reasonOf(7), /no PartitionKey/);
    assert.match(reasonOf(8), /not a valid Edm.Int64/);
    assert.equal(rejects.find((reject) => reject.line === 4)!.input, lines[3]);
    const stored: string[] = [];
    for await (const entity of table.listEntities()) stored.push(`${entity.partitionKey}/${entity.rowKey}`);
    assert.deepEqual(stored, ['a/1', 'a/4', 'a/exists', 'b/6']);
  });

  test('a malformed CSV record is rejected and the rest imported', async () => {
    const file = join(dir, 'broken.typed.csv');
    writeFileSync(file, 'PartitionKey,RowKey,n,n@type\np,1,1,Edm.Int32\np,2,2\np,3,three,Edm.Int32\np,4,4,Edm.Int64\n');
    const rejectsFile = join(dir, 'broken.rejects');
    const table = uniqueTableName('csvrej');
    const result = await cli('import', table, file, '--create-table', '--rejects', rejectsFile);
    assert.equal(result.code, 1, describeRun(result));
    const rejects = readFileSync(rejectsFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { line: number; reason: string; input: string[] });
    assert.deepEqual(
      rejects.map((reject) => [reject.line, reject.input]),
      [
        [3, ['p', '2', '2']],
        [4, ['p', '3', 'three', 'Edm.Int32']],
      ],
    );
    assert.match(rejects[0]!.reason, /3 cells, the header 4/);
    const stored: string[] = [];
    for await (const entity of tableClient(server, table).listEntities()) stored.push(entity.rowKey!);
    assert.deepEqual(stored, ['1', '4']);
  });

  test('--mode upsert replaces and --mode merge merges existing entities', async () => {
    const table = await freshTable(server, 'modes');
    await table.createEntity({ partitionKey: 'p', rowKey: 'r', kept: 'old', changed: 'old' });
    const file = join(dir, 'modes.jsonl');
    writeFileSync(file, '{"PartitionKey":"p","RowKey":"r","changed":"new"}\n');
    const merged = await cli('import', table.tableName, file, '--mode', 'merge');
    assert.equal(merged.code, 0, describeRun(merged));
    assert.deepEqual(pick(await table.getEntity('p', 'r')), { kept: 'old', changed: 'new' });
    const replaced = await cli('import', table.tableName, file, '--mode', 'upsert');
    assert.equal(replaced.code, 0, describeRun(replaced));
    assert.deepEqual(pick(await table.getEntity('p', 'r')), { changed: 'new' });
  });

  test('importing into a missing table without --create-table fails with one line', async () => {
    const file = join(dir, 'one.jsonl');
    writeFileSync(file, '{"PartitionKey":"p","RowKey":"r"}\n');
    const result = await cli('import', uniqueTableName('missing'), file);
    assert.equal(result.code, 1, describeRun(result));
    assert.match(result.stderr, /^cerulean import: table \w+ does not exist \(--create-table creates it\)\n$/m);
  });

  test('clear one-line errors and non-zero exits', async () => {
    const missing = await cli('export', uniqueTableName('none'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^cerulean export: table \w+ does not exist\n$/);
    const noFile = await cli('import', 'sometable', join(dir, 'no-such-file.jsonl'));
    assert.equal(noFile.code, 1);
    assert.match(noFile.stderr, /cannot read .*no-such-file\.jsonl/);
    const badFormat = await cli('export', 'sometable', '--format', 'xml');
    assert.equal(badFormat.code, 2, describeRun(badFormat));
    assert.match(badFormat.stderr, /argument 'xml' is invalid/);
    const unknown = await runCli(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command 'frobnicate'/);
  });

  test('every command has --help', async () => {
    for (const command of ['export', 'import', 'copy', 'backup', 'restore', 'tables', 'stats']) {
      const result = await runCli([command, '--help']);
      assert.equal(result.code, 0, describeRun(result));
      assert.match(result.stdout, new RegExp(`^Usage: cerulean ${command} `));
      assert.match(result.stdout, /Example:\n {2}cerulean /);
    }
    const top = await runCli(['--help']);
    assert.equal(top.code, 0);
    // The opening line names every service the server has, not tables alone.
    assert.match(top.stdout.split('\n')[2]!, /^An Azure Storage server \(Table, Queue and Blob services\)/);
    assert.match(top.stdout, /export .*\n.*import /);
    assert.match(top.stdout, /--port <number>/);
  });

  test('a SAS URL is an endpoint: an account SAS for the account, a table SAS for its table', async () => {
    const credential = new AzureNamedKeyCredential(devAccount, devKey);
    const accountSas = generateAccountSas(credential, {
      permissions: { query: true, list: true },
      resourceTypes: 'sco',
    });
    const tables = await runCli(['tables', '-c', `${server.url}?${accountSas}`]);
    assert.equal(tables.code, 0, describeRun(tables));
    assert.ok(tables.stdout.split('\n').includes(source.tableName), tables.stdout);
    const tableSas = generateTableSas(source.tableName, credential, { permissions: { query: true } });
    const exported = await runCli(['export', source.tableName, '-c', `${server.url}/${source.tableName}?${tableSas}`]);
    assert.equal(exported.code, 0, describeRun(exported));
    assert.deepEqual(comparableLines(exported.stdout), sourceExport);
    const unsigned = await runCli(['tables', '-c', 'http://127.0.0.1:1/otheraccount']);
    assert.equal(unsigned.code, 1);
    assert.match(
      unsigned.stderr,
      /^cerulean tables: the URL has no shared access signature: http:\/\/127.0.0.1:1\/otheraccount\n$/,
    );
  });

  test('tables and stats, as text and as JSON', async () => {
    const tables = await cli('tables', '--count', '--json');
    assert.equal(tables.code, 0, describeRun(tables));
    const listed = (JSON.parse(tables.stdout) as { tables: { name: string; entities: number }[] }).tables;
    assert.deepEqual(
      listed.find((table) => table.name === source.tableName),
      { name: source.tableName, entities: 284 },
    );
    const stats = await cli('stats', source.tableName, '--json', '--top', '2');
    assert.equal(stats.code, 0, describeRun(stats));
    assert.deepEqual(JSON.parse(stats.stdout), {
      table: source.tableName,
      entities: 284,
      partitions: 1 + 1 + 1 + bulkOtherPartitions,
      largestPartitions: [
        { partitionKey: 'bulk', entities: bulkPartitionEntities },
        { partitionKey: 'edge', entities: 3 },
      ],
      sizeOnDiskBytes: null,
    });
    const text = await cli('stats', source.tableName);
    assert.match(text.stdout, /entities: +284\n/);
    assert.match(text.stdout, /size on disk: unknown/);
    assert.match(text.stdout, /largest partitions:\n +250 +"bulk"\n/);
  });
});

describe('cerulean import against a busy server', () => {
  test('503 ServerBusy answers are retried until every row is stored', async () => {
    // One request at a time: the importer's concurrent transactions get 503 and must back off.
    const server = await startServer({ inMemory: true, args: ['--max-requests', '1'] });
    const dir = makeTempDir('cerulean-cli-busy-');
    try {
      const file = join(dir, 'many.jsonl');
      const partitions = 40;
      const lines = Array.from({ length: partitions * 5 }, (_, i) =>
        JSON.stringify({ PartitionKey: `p${Math.floor(i / 5)}`, RowKey: String(i % 5), i }),
      );
      writeFileSync(file, lines.join('\n'));
      const table = uniqueTableName('busy');
      const result = await runCli(['import', table, file, '--create-table', '-c', server.connectionString]);
      assert.equal(result.code, 0, describeRun(result));
      let count = 0;
      for await (const _ of tableClient(server, table).listEntities()) count++;
      assert.equal(count, partitions * 5);
    } finally {
      await server.stop();
      removeDir(dir);
    }
  });
});

function pick(entity: Record<string, unknown>): Record<string, unknown> {
  const { partitionKey: _p, rowKey: _r, etag: _e, timestamp: _t, 'odata.metadata': _m, ...rest } = entity;
  return rest;
}
