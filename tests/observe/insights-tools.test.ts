// Design insights judge applications, not Cerulean's own tools: an import of a key-sorted file,
// an export, or paging through a whole table are no findings; a property filter that reads a
// hundred entities per entity it returns leads the report.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeRun, runCli } from '../helpers/cli.js';
import { insights } from '../helpers/metrics.js';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../helpers/server.js';
import { freshTable, inParallel, uniqueTableName } from '../helpers/sdk.js';

describe('design insights and the tools', () => {
  let server: RunningServer;
  let dir: string;
  before(async () => {
    server = await startServer({ inMemory: true });
    dir = makeTempDir('cerulean-insights-tools-');
  });
  after(async () => {
    await server?.stop();
    if (dir) removeDir(dir);
  });

  test('imports, exports and full scans raise nothing; the wasteful filter comes first', async () => {
    // The CLI imports a key-sorted file (every insert after the highest key) and exports it again.
    const imported = uniqueTableName('imported');
    const file = join(dir, 'sorted.jsonl');
    const lines = Array.from({ length: 300 }, (_, i) =>
      JSON.stringify({ PartitionKey: 'p', RowKey: String(i).padStart(5, '0'), n: i }),
    );
    writeFileSync(file, `${lines.join('\n')}\n`);
    const imports = await runCli(['import', imported, file, '--create-table', '-c', server.connectionString]);
    assert.equal(imports.code, 0, describeRun(imports));
    const exports = await runCli(['export', imported, '-c', server.connectionString]);
    assert.equal(exports.code, 0, describeRun(exports));

    // An application pages through a whole table (returns all it reads) …
    const paged = await freshTable(server, 'paged');
    const entities = Array.from({ length: 210 }, (_, i) => ({
      partitionKey: `p${i % 7}`,
      rowKey: `r${i}`,
      Status: i < 2 ? 'rare' : 'common',
    }));
    await inParallel(entities, 8, (entity) => paged.createEntity(entity));
    let all = 0;
    for await (const _ of paged.listEntities()) all++;
    assert.equal(all, 210);
    // … and filters on a property: 210 read, 2 returned, 105 read per returned.
    let rare = 0;
    for await (const _ of paged.listEntities({ queryOptions: { filter: "Status eq 'rare'" } })) rare++;
    assert.equal(rare, 2);

    const { findings } = await insights(server.port);
    assert.deepEqual(
      findings.filter((finding) => finding.table === imported),
      [],
      'the import and export are no workload',
    );
    const scans = findings.filter((finding) => finding.kind === 'table-scan');
    assert.deepEqual(
      scans.map((finding) => finding.evidence['filter']),
      ['Status eq ?'],
      'a scan returning all it reads is no finding',
    );
    assert.equal(findings[0]!.kind, 'table-scan', JSON.stringify(findings, null, 2));
    assert.equal(findings[0]!.evidence['readPerReturned'], 105);
    assert.equal((findings[0] as unknown as { wastedEntities: number }).wastedEntities, 208);
  });
});
