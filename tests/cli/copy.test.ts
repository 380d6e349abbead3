// `cerulean copy` between real endpoints: Cerulean → Azurite → a second Cerulean, whole account
// and named tables, with the count check at the end.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { AzureNamedKeyCredential, TableClient, TableServiceClient, generateTableSas } from '@azure/data-tables';
import {
  comparableLines,
  describeRun,
  extremeEntities,
  runCli,
  startAzurite,
  type RunningAzurite,
} from '../helpers/cli.js';
import { devAccount, devKey, makeTempDir, removeDir, startServer, type RunningServer } from '../helpers/server.js';
import { clientOptions, freshTable, uniqueTableName } from '../helpers/sdk.js';

const bulkEntities = 320;

describe('cerulean copy', () => {
  let origin: RunningServer;
  let azurite: RunningAzurite;
  let returned: RunningServer;
  let dir: string;
  let tables: string[];

  before(async () => {
    [origin, returned, azurite] = await Promise.all([
      startServer({ inMemory: true }),
      startServer({ inMemory: true }),
      startAzurite(),
    ]);
    dir = makeTempDir('cerulean-copy-');
    const edge = await freshTable(origin, 'edge');
    for (const entity of extremeEntities()) await edge.createEntity(entity as never);
    const bulk = await freshTable(origin, 'bulk');
    const entities = Array.from({ length: bulkEntities }, (_, i) => ({
      partitionKey: `p${i % 7}`,
      rowKey: String(i),
      n: i,
      s: `v${i}`,
    }));
    for (let p = 0; p < 7; p++) {
      const partition = entities.filter((entity) => entity.partitionKey === `p${p}`);
      for (let i = 0; i < partition.length; i += 100)
        await bulk.submitTransaction(partition.slice(i, i + 100).map((entity) => ['create', entity]));
    }
    tables = [edge.tableName, bulk.tableName].sort();
  });
  after(async () => {
    await Promise.allSettled([origin?.stop(), returned?.stop(), azurite?.stop()]);
    if (dir) removeDir(dir);
  });

  const exportLines = async (connectionString: string, table: string) => {
    const result = await runCli(['export', table, '-c', connectionString]);
    assert.equal(result.code, 0, describeRun(result));
    return comparableLines(result.stdout);
  };

  test('the whole account to Azurite and back to another Cerulean: every entity, counts and values checked', async () => {
    const there = await runCli(['copy', origin.connectionString, azurite.connectionString], { cwd: dir });
    // Azurite stores -0.0 as 0: the counts match, but the value check says what was lost.
    assert.equal(there.code, 1, describeRun(there));
    const [edge, bulk] = [
      tables.find((table) => table.startsWith('edge'))!,
      tables.find((table) => table.startsWith('bulk'))!,
    ];
    assert.match(there.stdout, new RegExp(`^${bulk}: 320 read, 320 at the destination, 100 compared$`, 'm'));
    assert.match(there.stdout, new RegExp(`^${edge}: 4 read, 4 at the destination, 4 compared VALUES DIFFER\n`, 'm'));
    assert.match(
      there.stdout,
      /^ {2}"edge" "min" negzero: -0\.0 \(Edm\.Double\) at the source, 0\.0 \(Edm\.Double\) at the destination$/m,
    );
    assert.match(there.stderr, new RegExp(`^cerulean copy: value check failed for ${edge}$`, 'm'));
    assert.doesNotMatch(there.stderr, /counts match/);

    const back = await runCli(['copy', azurite.connectionString, returned.connectionString], { cwd: dir });
    assert.equal(back.code, 0, describeRun(back));
    assert.match(back.stderr, /2 table\(s\) copied, counts match, sampled values match/);
    const names: string[] = [];
    for await (const table of TableServiceClient.fromConnectionString(
      returned.connectionString,
      clientOptions,
    ).listTables())
      names.push(table.name!);
    assert.deepEqual(names.sort(), tables);
    for (const table of tables) {
      // Azurite keeps every value but the sign of -0 (its EdmDouble writes -0 as `0.0`).
      const expected = (await exportLines(origin.connectionString, table)).map((line) =>
        line.replace('"negzero":-0.0', '"negzero":0.0'),
      );
      assert.deepEqual(await exportLines(returned.connectionString, table), expected, table);
    }
  });

  test('--table copies only the named tables; table SAS URLs name the tables', async () => {
    const only = tables.find((table) => table.startsWith('bulk'))!;
    const target = await startServer({ inMemory: true });
    try {
      const result = await runCli(['copy', origin.connectionString, target.connectionString, '--table', only], {
        cwd: dir,
      });
      assert.equal(result.code, 0, describeRun(result));
      assert.equal(result.stdout, `${only}: ${bulkEntities} read, ${bulkEntities} at the destination, 100 compared\n`);
      const names: string[] = [];
      for await (const table of TableServiceClient.fromConnectionString(
        target.connectionString,
        clientOptions,
      ).listTables())
        names.push(table.name!);
      assert.deepEqual(names, [only]);

      // Table SAS URLs on both sides: one table, copied into the table the destination names.
      const credential = new AzureNamedKeyCredential(devAccount, devKey);
      const edge = tables.find((table) => table.startsWith('edge'))!;
      const renamed = await freshTable(target, 'renamed');
      const from = `${origin.url}/${edge}?${generateTableSas(edge, credential, { permissions: { query: true } })}`;
      const to = `${target.url}/${renamed.tableName}?${generateTableSas(renamed.tableName, credential, { permissions: { query: true, add: true, update: true } })}`;
      const sas = await runCli(['copy', from, to], { cwd: dir });
      assert.equal(sas.code, 0, describeRun(sas));
      assert.equal(sas.stdout, `${edge}: 4 read, 4 at the destination, 4 compared\n`);
      assert.deepEqual(
        await exportLines(target.connectionString, renamed.tableName),
        await exportLines(origin.connectionString, edge),
      );
    } finally {
      await target.stop();
    }
  });

  test('a count mismatch fails the copy', async () => {
    // The destination table already holds an entity the source lacks: counts differ afterwards.
    const only = tables.find((table) => table.startsWith('edge'))!;
    const extra = TableClient.fromConnectionString(azurite.connectionString, only, clientOptions);
    await extra.createEntity({ partitionKey: 'zz', rowKey: 'extra' });
    const result = await runCli(['copy', origin.connectionString, azurite.connectionString, '--table', only], {
      cwd: dir,
    });
    assert.equal(result.code, 1, describeRun(result));
    assert.match(result.stdout, new RegExp(`^${only}: 4 read, 5 at the destination, 4 compared MISMATCH$`, 'm'));
    assert.match(result.stderr, new RegExp(`^cerulean copy: count check failed for ${only}$`, 'm'));
  });

  test('an unreachable or unknown source fails with one line', async () => {
    const result = await runCli(
      ['copy', origin.connectionString, azurite.connectionString, '--table', uniqueTableName('none')],
      { cwd: dir },
    );
    assert.equal(result.code, 1, describeRun(result));
    assert.match(result.stderr, /^cerulean copy: table \w+ does not exist\n$/m);
    const bad = await runCli(['copy', 'AccountName=x', azurite.connectionString], { cwd: join(dir) });
    assert.equal(bad.code, 1, describeRun(bad));
    assert.match(bad.stderr, /^cerulean copy: not a valid connection string/);
  });
});
