// Filtered table scans whose steps run on two scan threads at once (--scan-split always) answer
// exactly as scans on one thread (--scan-split never): the same entities on every page, pages
// full to $top, continuations after everything returned and at or before the next result,
// through a real on-disk server and raw HTTP. 24,000 entities: more than one step's window, so
// that steps are split at predicted keys, joined, and continued from the step before.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { tableClient, uniqueTableName } from '../../helpers/sdk.js';
import {
  compareKeys,
  edm,
  fetchAllPages,
  insertEntities,
  keyOf,
  keyText,
  type EntityPage,
  type Key,
  type TestEntity,
} from '../../helpers/query.js';

const partitions = 240;
const rowsPerPartition = 100;

function buildEntities(): TestEntity[] {
  const entities: TestEntity[] = [];
  for (let i = 0; i < partitions * rowsPerPartition; i++) {
    entities.push({
      // Unpadded RowKeys sort '10' before '2': the cut is predicted from keys, not counted.
      partitionKey: `p${String(Math.floor(i / rowsPerPartition) + 1).padStart(3, '0')}`,
      rowKey: String(i % rowsPerPartition),
      properties: { n: edm.int32(i % 10), rare: edm.int32(i % 997 === 0 ? 1 : 0) },
    });
  }
  return entities.sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
}

const entities = buildEntities();
const n = (e: TestEntity) => e.properties.n!.value as number;

const all = () => true;
/** `inRange`: the rows of the planned key range, each of which the walk must read once. */
const queries: {
  filter: string;
  inRange: (e: TestEntity) => boolean;
  matches: (e: TestEntity) => boolean;
  tops: number[];
}[] = [
  { filter: 'rare eq 1', inRange: all, matches: (e) => e.properties.rare!.value === 1, tops: [1, 7, 1000] },
  { filter: 'n eq 3', inRange: all, matches: (e) => n(e) === 3, tops: [1000] },
  {
    filter: "n eq 3 and PartitionKey gt 'p100'",
    inRange: (e) => e.partitionKey > 'p100',
    matches: (e) => n(e) === 3 && e.partitionKey > 'p100',
    tops: [500],
  },
  {
    filter: "n lt 2 and PartitionKey lt 'p150'",
    inRange: (e) => e.partitionKey < 'p150',
    matches: (e) => n(e) < 2 && e.partitionKey < 'p150',
    tops: [1000],
  },
];

function checkPages(pages: readonly EntityPage[], expected: readonly Key[], top: number): void {
  assert.deepEqual(pages.flatMap((p) => p.keys).map(keyText), expected.map(keyText), 'every result once, in key order');
  pages.forEach((page, i) => {
    if (i === pages.length - 1) return;
    assert.equal(page.keys.length, top, `page ${i + 1} is full`);
    const resume: Key = [page.resumeKey![0], page.resumeKey![1] ?? ''];
    assert.ok(compareKeys(resume, page.keys.at(-1)!) > 0, `page ${i + 1} resumes after its last entity`);
    const next = pages.slice(i + 1).flatMap((p) => p.keys)[0];
    if (next !== undefined)
      assert.ok(compareKeys(resume, next) <= 0, `page ${i + 1} resumes at or before the next result`);
  });
}

describe('filtered table scans split across two scan threads', () => {
  const servers: Record<'always' | 'never', RunningServer | undefined> = { always: undefined, never: undefined };
  const table = uniqueTableName('split');

  before(async () => {
    for (const when of ['always', 'never'] as const) {
      const server = await startServer({ args: ['--log-level', 'warn', '--scan-split', when] });
      servers[when] = server;
      const client = tableClient(server, table);
      await client.createTable();
      await insertEntities(client, entities);
    }
  });
  after(async () => {
    await servers.always?.stop();
    await servers.never?.stop();
  });

  for (const { filter, inRange, matches, tops } of queries) {
    for (const top of tops) {
      test(`${filter}, $top=${top}: the same pages split or not`, async () => {
        const expected = entities.filter(matches).map(keyOf);
        const split = await fetchAllPages(servers.always!.port, table, { $filter: filter, $top: top });
        const plain = await fetchAllPages(servers.never!.port, table, { $filter: filter, $top: top });
        checkPages(split, expected, top);
        checkPages(plain, expected, top);
        assert.deepEqual(
          split.map((p) => p.keys.map(keyText)),
          plain.map((p) => p.keys.map(keyText)),
          'page by page',
        );
        const scanned = (pages: EntityPage[]) => pages.reduce((sum, p) => sum + p.plan.scanned, 0);
        const inRanges = entities.filter(inRange).length;
        assert.ok(
          scanned(split) >= inRanges && scanned(split) <= inRanges + split.length,
          `scanned ${scanned(split)} of ${inRanges} rows`,
        );
      });
    }
  }

  test('--scan-split takes auto, always or never', async () => {
    const server = await startServer({ args: ['--scan-split', 'sometimes'] }).catch((error: Error) => error);
    assert.ok(
      server instanceof Error && /--scan-split must be one of auto, always, never/.test(server.message),
      String(server),
    );
  });
});
