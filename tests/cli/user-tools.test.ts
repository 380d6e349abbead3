// The CLI as a demanding user meets it: exports that re-import, CSV files with broken quotes,
// rejects files of earlier runs, one way to name the endpoint, one-line usage errors, and the
// single-entity and fault commands. Every command is typed as a user would (tests/helpers/cli.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TableClient } from '@azure/data-tables';
import { describeRun, runCli, startCli } from '../helpers/cli.js';
import { send } from '../helpers/http.js';
import { sample, scrape } from '../helpers/metrics.js';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../helpers/server.js';
import { freshTable, tableClient, uniqueTableName } from '../helpers/sdk.js';

describe('cerulean tools as a user drives them', () => {
  let server: RunningServer;
  let dir: string;
  const cli = (...args: string[]) => runCli([...args, '-c', server.connectionString], { cwd: dir });

  before(async () => {
    server = await startServer({ inMemory: true });
    dir = makeTempDir('cerulean-cli-user-');
  });
  after(async () => {
    await server?.stop();
    if (dir) removeDir(dir);
  });

  async function keysOf(client: TableClient): Promise<string[]> {
    const keys: string[] = [];
    for await (const entity of client.listEntities()) keys.push(`${entity.partitionKey}/${entity.rowKey}`);
    return keys;
  }

  test('export --select keeps the keys, so the file imports back under the same keys', async () => {
    const source = await freshTable(server, 'sel');
    await source.createEntity({ partitionKey: 'p1', rowKey: 'r1', Name: 'Ann', Age: 42 });
    await source.createEntity({ partitionKey: 'p2', rowKey: 'r2', Name: 'Bob', Age: 7 });
    for (const file of ['sel.typed.csv', 'sel.csv', 'sel.jsonl']) {
      const out = join(dir, file);
      const exported = await cli('export', source.tableName, '--select', 'Name', '--out', out);
      assert.equal(exported.code, 0, describeRun(exported));
      const target = uniqueTableName('selback');
      const imported = await cli('import', target, out, '--create-table');
      assert.equal(imported.code, 0, describeRun(imported));
      const back = tableClient(server, target);
      assert.deepEqual(await keysOf(back), ['p1/r1', 'p2/r2'], file);
      const entity = await back.getEntity('p1', 'r1');
      assert.equal(entity['Name'], 'Ann');
      assert.equal('Age' in entity, false, `${file}: only the selected property`);
    }
  });

  test('import refuses rows without keys: they go to the rejects file', async () => {
    const file = join(dir, 'nokeys.jsonl');
    writeFileSync(
      file,
      '{"Name":"no keys at all"}\n{"PartitionKey":"p","Name":"no row key"}\n{"PartitionKey":"p","RowKey":"ok"}\n',
    );
    const table = uniqueTableName('nokeys');
    const result = await cli('import', table, file, '--create-table');
    assert.equal(result.code, 1, describeRun(result));
    const rejects = readFileSync(`${file}.rejects.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { line: number; reason: string });
    assert.deepEqual(
      rejects.map((reject) => reject.line),
      [1, 2],
    );
    assert.match(rejects[0]!.reason, /no PartitionKey/);
    assert.deepEqual(await keysOf(tableClient(server, table)), ['p/ok']);
  });

  test('an unterminated quote costs its own line only: every row is stored or rejected with its line', async () => {
    const file = join(dir, 'quotes.csv');
    const lines = [
      'PartitionKey,RowKey,Note',
      'p,1,plain',
      'p,2,"a note that never closes',
      'p,3,after the broken one',
      'p,4,"a note over',
      'two lines"',
      'p,5,"ok ""quoted"" text"',
      'p,6,last',
    ];
    writeFileSync(file, lines.join('\n') + '\n');
    const table = uniqueTableName('quotes');
    const result = await cli('import', table, file, '--create-table');
    assert.equal(result.code, 1, describeRun(result));
    assert.match(result.stderr, /1 rows rejected/);
    const rejects = readFileSync(`${file}.rejects.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { line: number; reason: string; input: string });
    assert.deepEqual(
      rejects.map((reject) => [reject.line, reject.input]),
      [[3, lines[2]]],
    );
    assert.match(rejects[0]!.reason, /malformed CSV: a quote that is never closed/);
    const client = tableClient(server, table);
    assert.deepEqual(await keysOf(client), ['p/1', 'p/3', 'p/4', 'p/5', 'p/6']);
    assert.equal((await client.getEntity('p', '4'))['Note'], 'a note over\ntwo lines');
    assert.equal((await client.getEntity('p', '5'))['Note'], 'ok "quoted" text');
  });

  test("a failed import leaves the previous run's rejects file alone", async () => {
    const file = join(dir, 'again.jsonl');
    writeFileSync(file, '{"PartitionKey":"p","RowKey":"1","n":"x","n@odata.type":"Edm.Int32"}\n');
    const table = uniqueTableName('again');
    const first = await cli('import', table, file, '--create-table');
    assert.equal(first.code, 1, describeRun(first));
    const rejectsFile = `${file}.rejects.jsonl`;
    const earlier = readFileSync(rejectsFile, 'utf8');
    // The second run fails (no such table): the rejects of the first run are still there.
    const second = await cli('import', uniqueTableName('missing'), file);
    assert.notEqual(second.code, 0, describeRun(second));
    assert.match(second.stderr, /rejects file .*again\.jsonl\.rejects\.jsonl exists/);
    assert.equal(readFileSync(rejectsFile, 'utf8'), earlier);
    const named = await cli('import', table, file, '--rejects', join(dir, 'second.rejects.jsonl'));
    assert.equal(named.code, 1, describeRun(named));
    assert.equal(readFileSync(rejectsFile, 'utf8'), earlier);
    assert.ok(existsSync(join(dir, 'second.rejects.jsonl')));
  });

  test('one way to name the endpoint: -c and the environment variable work for insights too', async () => {
    const flag = await runCli(['insights', '--json', '-c', server.connectionString]);
    assert.equal(flag.code, 0, describeRun(flag));
    assert.ok(Array.isArray((JSON.parse(flag.stdout) as { findings: unknown[] }).findings));
    const env = await runCli(['insights', '--json'], {
      env: { AZURE_TABLES_CONNECTION_STRING: server.connectionString },
    });
    assert.equal(env.code, 0, describeRun(env));
    assert.ok('counts' in (JSON.parse(env.stdout) as object));
  });

  test('--version, one-line usage errors with a hint, a clear error for a nonsense connection string', async () => {
    const version = await runCli(['--version']);
    assert.equal(version.code, 0, describeRun(version));
    assert.match(version.stdout, /^cerulean \d+\.\d+\.\d+\n$/);
    const missing = await runCli(['export']);
    assert.equal(missing.code, 2, describeRun(missing));
    assert.match(
      missing.stderr,
      /^cerulean: missing required argument 'table'\n\(cerulean export --help for usage\)\n$/,
    );
    const unknown = await runCli(['import', 'T', 'f.jsonl', '--bogus']);
    assert.equal(unknown.code, 2, describeRun(unknown));
    assert.equal(unknown.stderr.trim().split('\n').length, 2, unknown.stderr);
    const before = await runCli(['-c', server.connectionString, 'tables']);
    assert.equal(before.code, 2, describeRun(before));
    assert.match(before.stderr, /^cerulean: options go after the command: cerulean tables \[options\]\n/);
    const nonsense = await runCli(['tables', '-c', 'hello world']);
    assert.equal(nonsense.code, 1, describeRun(nonsense));
    assert.doesNotMatch(nonsense.stderr, /undefined/);
    assert.match(
      nonsense.stderr,
      /^cerulean tables: not a valid connection string or URL: give AccountName=…;AccountKey=…/,
    );
    assert.equal(nonsense.stderr.split('\n').length, 2);
  });

  test('a reader of stdout that went away ends the command quietly, as Unix tools do', async () => {
    for (const args of [['copy', '--help'], ['--help'], ['tables', '-c', server.connectionString]]) {
      const run = await runCli(args, { closedStdout: true });
      assert.equal(run.code, 0, `${args.join(' ')}: ${describeRun(run)}`);
      assert.equal(run.stderr, '', args.join(' '));
    }
  });

  test('get, put and delete one entity; put reads what get prints', async () => {
    const client = await freshTable(server, 'one');
    const put = await cli(
      'put',
      client.tableName,
      '{"PartitionKey":"p","RowKey":"r","Score":2.0,"Age":42,"Big":"9007199254740993","Big@odata.type":"Edm.Int64"}',
    );
    assert.equal(put.code, 0, describeRun(put));
    const got = await cli('get', client.tableName, 'p', 'r');
    assert.equal(got.code, 0, describeRun(got));
    assert.equal(got.stdout.split('\n').length, 2, 'one JSON line');
    const line = JSON.parse(got.stdout) as Record<string, unknown>;
    assert.match(got.stdout, /"Score":2\.0,"Score@odata\.type":"Edm\.Double"/);
    assert.equal(line['Big'], '9007199254740993');
    assert.equal(line['Age@odata.type'], 'Edm.Int32');
    const etag = line['odata.etag'] as string;
    assert.match(etag, /^W\/"/);

    // Piped: get | put into another table keeps every type.
    const copy = await freshTable(server, 'onecopy');
    const piped = await runCli(['put', copy.tableName, '-c', server.connectionString], { stdin: got.stdout });
    assert.equal(piped.code, 0, describeRun(piped));
    const copied = await cli('get', copy.tableName, 'p', 'r');
    assert.match(
      copied.stdout,
      /"Score":2\.0,"Score@odata\.type":"Edm\.Double","Age":42,"Age@odata\.type":"Edm\.Int32"/,
    );

    const stale = await cli(
      'delete',
      client.tableName,
      'p',
      'r',
      '--if-match',
      'W/"datetime\'2001-01-01T00%3A00%3A00Z\'"',
    );
    assert.equal(stale.code, 1, describeRun(stale));
    assert.match(stale.stderr, /has another ETag now/);
    const deleted = await cli('delete', client.tableName, 'p', 'r', '--if-match', etag);
    assert.equal(deleted.code, 0, describeRun(deleted));
    const gone = await cli('get', client.tableName, 'p', 'r');
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /^cerulean get: \w+ has no entity "p" "r"\n$/);
  });

  test('faults show | set | clear sign the admin request for the user', async () => {
    const rules = '{"seed":7,"rules":[{"kind":"serverBusy","every":2,"operations":["InsertEntity"]}]}';
    const set = await cli('faults', 'set', rules);
    assert.equal(set.code, 0, describeRun(set));
    const shown = await cli('faults', 'show');
    assert.equal(shown.code, 0, describeRun(shown));
    assert.match(shown.stdout, /"serverBusy"/);
    const cleared = await cli('faults', 'clear');
    assert.equal(cleared.code, 0, describeRun(cleared));
    assert.doesNotMatch(cleared.stdout, /serverBusy/);
    const bad = await cli('faults', 'set', '{"rules":[{"kind":"nonsense"}]}');
    assert.equal(bad.code, 1, describeRun(bad));
    assert.match(bad.stderr, /answered 400/);
  });

  /** Slows `operation` by `latencyMs` on the server; resolves to a function telling how often it matched. */
  async function slow(operation: string, latencyMs: number): Promise<() => Promise<number>> {
    const rules = JSON.stringify({ rules: [{ kind: 'latency', every: 1, latencyMs, operations: [operation] }] });
    const set = await cli('faults', 'set', rules);
    assert.equal(set.code, 0, describeRun(set));
    return async () => {
      const response = await send(server.port, { method: 'GET', path: '/_faults' });
      return (response.json() as { rules: { matched: number }[] }).rules[0]?.matched ?? 0;
    };
  }

  async function until(condition: () => Promise<boolean>): Promise<void> {
    const deadlineMs = Date.now() + 30_000;
    while (!(await condition())) {
      assert.ok(Date.now() < deadlineMs, 'the command never reached the server');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('rows that alternate between partitions still travel in full transactions', async () => {
    const file = join(dir, 'alternating.jsonl');
    const lines = Array.from({ length: 400 }, (_, i) =>
      JSON.stringify({ PartitionKey: `p${i % 2}`, RowKey: String(i).padStart(4, '0') }),
    );
    writeFileSync(file, `${lines.join('\n')}\n`);
    const before = await scrape(server.port);
    const table = uniqueTableName('alternating');
    const result = await cli('import', table, file, '--create-table');
    assert.equal(result.code, 0, describeRun(result));
    const after = await scrape(server.port);
    const delta = (operation: string) =>
      (sample(after, 'cerulean_requests_total', { operation }) ?? 0) -
      (sample(before, 'cerulean_requests_total', { operation }) ?? 0);
    assert.equal(delta('InsertEntity'), 0, 'no one-entity inserts');
    assert.equal(delta('EntityGroupTransaction'), 4, '400 rows of 2 partitions: 4 transactions of 100');
    const help = await runCli(['import', '--help']);
    assert.match(help.stdout, /grouped by PartitionKey within a window of the last 10,000 rows/);
  });

  test('Ctrl-C during an import says what was stored; --skip-existing stores the rest', async () => {
    const file = join(dir, 'big.jsonl');
    const lines = Array.from({ length: 4000 }, (_, i) =>
      JSON.stringify({ PartitionKey: `p${Math.floor(i / 100)}`, RowKey: String(i), n: i }),
    );
    writeFileSync(file, `${lines.join('\n')}\n`);
    const table = await freshTable(server, 'ctrlc');
    const matched = await slow('EntityGroupTransaction', 400);
    const run = startCli(['import', table.tableName, file, '-c', server.connectionString], { cwd: dir });
    await until(async () => (await matched()) > 0);
    run.signal('SIGINT');
    const interrupted = await run.result;
    await cli('faults', 'clear');
    assert.equal(interrupted.code, 130, describeRun(interrupted));
    const told =
      /interrupted: ([\d,]+) of the ([\d,]+) rows read \(to line \d+\) were stored; run the same import with --skip-existing/.exec(
        interrupted.stderr,
      );
    assert.ok(told, interrupted.stderr);
    const stored = (await keysOf(table)).length;
    assert.equal(stored, Number(told[1]!.replace(/,/g, '')), 'the count said is the count stored');
    assert.ok(stored < 4000, `${stored} stored: interrupted before the end`);

    const resumed = await cli('import', table.tableName, file, '--skip-existing');
    assert.equal(resumed.code, 0, describeRun(resumed));
    assert.match(
      resumed.stderr,
      new RegExp(
        `${(4000 - stored).toLocaleString('en-US')} entities stored, ${stored.toLocaleString('en-US')} existing skipped`,
      ),
    );
    assert.equal((await keysOf(table)).length, 4000);
  });

  test('Ctrl-C during an export to a file: nothing half-written is left, and it says so', async () => {
    const table = await freshTable(server, 'ctrlcexp');
    const rows = Array.from({ length: 2500 }, (_, i) => ({
      partitionKey: `p${Math.floor(i / 100)}`,
      rowKey: String(i),
    }));
    for (let i = 0; i < rows.length; i += 100)
      await table.submitTransaction(rows.slice(i, i + 100).map((row) => ['create', row] as const));
    const out = join(dir, 'interrupted.jsonl');
    const matched = await slow('QueryEntities', 400);
    const run = startCli(['export', table.tableName, '--out', out, '-c', server.connectionString], { cwd: dir });
    await until(async () => (await matched()) > 0);
    run.signal('SIGINT');
    const interrupted = await run.result;
    await cli('faults', 'clear');
    assert.equal(interrupted.code, 130, describeRun(interrupted));
    assert.match(
      interrupted.stderr,
      /interrupted: [\d,]+ entities read; nothing written to .*interrupted\.jsonl \(its partial file removed\)/,
    );
    assert.equal(existsSync(out), false);
    assert.equal(existsSync(`${out}.partial`), false);
  });
});
