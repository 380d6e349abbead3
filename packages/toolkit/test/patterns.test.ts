// The other patterns' guarantees on both servers: queries (typed filters that cannot be
// injected, pages with continuation, $select), retries (bounded, backoff with jitter), log tail
// order, data series, wide and large entities (whole or not at all; integrity), period tables.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  backoffMs,
  codecs,
  defineModel,
  IntegrityError,
  keys,
  LargeObjectStore,
  logTailModel,
  ModelTable,
  newest,
  newEventId,
  PeriodTables,
  RetriesExhaustedError,
  t,
  where,
  WideEntityStore,
  withRetry,
  DataSeries,
  type WireProperties,
} from '../src/index.js';
import type { PipelinePolicy } from '@azure/core-rest-pipeline';
import { connect } from '../src/index.js';
import { newTable, seededRandom, serverKinds, serversForFile, testRetry } from './fixtures.js';
import { uniqueTableName } from './servers.js';

const Item = defineModel({
  kind: 'item',
  schema: {
    shelf: t.string(),
    n: t.int32(),
    label: t.string(),
    weight: t.double(),
    big: t.int64(),
    seen: t.dateTime(),
    tag: t.guid(),
  },
  partitionKey: ['shelf'],
  rowKey: [{ field: 'n', codec: codecs.uint(4) }],
});

describe('retries (no server)', () => {
  test('backoff is full jitter under an exponential cap', () => {
    const policy = { maxAttempts: 5, baseDelayMs: 10, maxDelayMs: 50, random: () => 0.999 };
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((a) => backoffMs(policy, a)),
      [9, 19, 39, 49, 49],
    );
    assert.equal(backoffMs({ ...policy, random: () => 0 }, 3), 0);
  });
  test('transient errors are retried up to the bound, others not at all', async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw Object.assign(new Error('busy'), { statusCode: 503 });
        },
        { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 2, random: Math.random },
      ),
      (error: unknown) => error instanceof RetriesExhaustedError && error.attempts === 4,
    );
    assert.equal(calls, 4);
    calls = 0;
    await assert.rejects(
      withRetry(async () => {
        calls++;
        throw Object.assign(new Error('bad'), { statusCode: 400 });
      }),
    );
    assert.equal(calls, 1);
    calls = 0;
    assert.equal(
      await withRetry(
        async () => (++calls < 3 ? Promise.reject(Object.assign(new Error('x'), { statusCode: 500 })) : 'ok'),
        testRetry(1),
      ),
      'ok',
    );
  });
});

/** 57 items on shelf 'a' with every EDM type; labels cycle through a quote, an injection attempt and a plain one. */
async function upsertItems(items: ModelTable<typeof Item.schema>): Promise<void> {
  const labels = ["O'Brien", "' or 1 eq 1 or '' eq '", 'plain'];
  for (let n = 0; n < 57; n++) {
    await items.upsert({
      shelf: 'a',
      n,
      label: labels[n % 3]!,
      weight: n / 4,
      big: (1n << 40n) + BigInt(n),
      seen: new Date(Date.UTC(2026, 0, 1, 0, n)),
      tag: `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`,
    });
  }
}

describe('patterns on the servers', () => {
  const servers = serversForFile();

  for (const kind of serverKinds) {
    test(`${kind}: typed filters, injection-proof literals, pages with continuation, $select`, async () => {
      const { client } = await newTable(servers.get(kind)!, 'Items');
      const items = new ModelTable(client, Item);
      await upsertItems(items);
      const w = where(Item.schema);
      assert.equal((await items.list({ filter: w.eq('label', "O'Brien") })).length, 19, 'quotes are escaped');
      assert.equal(
        (await items.list({ filter: w.eq('label', "' or 1 eq 1 or '' eq '") })).length,
        19,
        'an injection attempt is just a string',
      );
      assert.equal(
        (await items.list({ filter: w.compare('big', 'ge', (1n << 40n) + 50n) })).length,
        7,
        'Int64 literal',
      );
      assert.equal(
        (await items.list({ filter: w.compare('seen', 'lt', new Date(Date.UTC(2026, 0, 1, 0, 10))) })).length,
        10,
        'DateTime literal',
      );
      assert.equal((await items.list({ filter: w.compare('weight', 'gt', 13.5) })).length, 2, 'Double literal');
      assert.equal(
        (await items.list({ filter: w.eq('tag', '00000000-0000-0000-0000-000000000007') })).length,
        1,
        'Guid literal',
      );
      const range = keys.rowKeyRange({ ge: Item.rowKey.encode({ n: 10 }), lt: Item.rowKey.encode({ n: 20 }) });
      assert.equal((await items.list({ filter: keys.partitionKey('eq', 'a').and(range) })).length, 10, 'key range');

      // Pages of 10, stopped after the second page and resumed from its token by a new iterator.
      const firstTwo: number[] = [];
      let token: string | undefined;
      for await (const page of items.pages({ pageSize: 10 })) {
        firstTwo.push(...page.items.map((i) => i.n));
        token = page.continuationToken;
        if (firstTwo.length === 20) break;
      }
      assert.ok(token !== undefined);
      const rest: number[] = [];
      for await (const page of items.pages({ pageSize: 10, continuationToken: token })) {
        assert.ok(page.items.length <= 10);
        rest.push(...page.items.map((i) => i.n));
      }
      assert.deepEqual(
        [...firstTwo, ...rest],
        Array.from({ length: 57 }, (_, n) => n),
        'every entity once, in key order',
      );

      const selected = await items.list({ select: ['n', 'weight'], pageSize: 1000 });
      assert.equal(selected.length, 57);
      assert.ok(
        selected.every((i) => i.label === undefined && typeof i.weight === 'number'),
        '$select returns only what was asked',
      );
      const point = await items.get({ shelf: 'a', n: 42 });
      assert.equal(point?.big, (1n << 40n) + 42n, 'point read');
      assert.equal(await items.get({ shelf: 'a', n: 999 }), undefined, 'a missing entity is undefined');
    });

    test(`${kind}: log tail returns the newest first; data series keeps one row per day`, async () => {
      const server = servers.get(kind)!;
      const Event = logTailModel('event', { text: t.string() });
      const events = new ModelTable((await newTable(server, 'Events')).client, Event);
      const random = seededRandom(5);
      const times = Array.from({ length: 40 }, () => new Date(Date.UTC(2026, 5, 1) + Math.floor(random() * 1e9)));
      for (const at of times) await events.create({ stream: 's', at, id: newEventId(), text: at.toISOString() });
      const latest = await newest(events, { stream: 's' }, 7);
      const expected = [...times]
        .sort((a, b) => b.getTime() - a.getTime())
        .slice(0, 7)
        .map((d) => d.toISOString());
      assert.deepEqual(
        latest.map((e) => e.text),
        expected,
      );

      const series = new DataSeries((await newTable(server, 'Series')).client);
      const day = Date.UTC(2026, 5, 1);
      await series.recordMany('m', [
        { at: new Date(day + 3_600_000 * 23 + 5), value: 1.25 },
        { at: new Date(day + 86_400_000), value: 7 },
      ]);
      const values = await series.period('m', new Date(day));
      assert.equal(values[23], 1.25);
      assert.equal(values.filter((v) => v !== undefined).length, 1, 'the next day went to its own row');
      assert.equal((await series.period('m', new Date(day + 86_400_000)))[0], 7);
    });

    test(`${kind}: wide entities are written and read whole, even under injected failures`, async () => {
      const { client, faults } = await newTable(servers.get(kind)!, 'Wide', { probability: 0.3, seed: 8 });
      const store = new WideEntityStore(client, { retry: testRetry(2) });
      for (let round = 0; round < 6; round++) {
        const width = [700, 300, 1000, 10, 520, 260][round]!;
        const properties: WireProperties = {};
        for (let i = 0; i < width; i++) properties[`p${i}`] = { value: `r${round}-${i}`, type: 'String' };
        await store.write('w', 'thing', properties);
        const back = await store.read('w', 'thing');
        assert.equal(Object.keys(back!).length, width, `round ${round}`);
        assert.ok(
          Object.values(back!).every((v) => String(v.value).startsWith(`r${round}-`)),
          'every part is from the same write',
        );
      }
      // Concurrent rewrites of different widths: the result is exactly one of them, whole.
      const widths = [900, 40, 600];
      await Promise.all(
        widths.map((width, w) => {
          const properties: WireProperties = {};
          for (let i = 0; i < width; i++) properties[`p${i}`] = { value: `w${w}-${i}`, type: 'String' };
          return store.write('w', 'thing', properties);
        }),
      );
      const winner = await store.read('w', 'thing');
      const tag = String(winner!.p0!.value).split('-')[0]!;
      assert.equal(Object.keys(winner!).length, widths[Number(tag.slice(1))]);
      assert.ok(Object.values(winner!).every((v) => String(v.value).startsWith(`${tag}-`)));
      await store.delete('w', 'thing');
      assert.equal(await store.read('w', 'thing'), undefined);
      assert.ok(faults!.counters.before + faults!.counters.after > 0);
    });

    test(`${kind}: large entities round-trip, detect corruption, and survive a failed replace`, async () => {
      const server = servers.get(kind)!;
      const { client, name } = await newTable(server, 'Large');
      const store = new LargeObjectStore(client, { retry: testRetry(3) });
      const data = randomBytes(1_600_000);
      await store.put('p', 'blob', data);
      assert.deepEqual(Buffer.from((await store.get('p', 'blob'))!), data);

      // A replace that dies after its first chunk write: the old version stays whole.
      let writes = 0;
      const dying: PipelinePolicy = {
        name: 'dies-after-one-write',
        sendRequest: (request, next) =>
          request.method === 'PUT' && ++writes > 1
            ? Promise.reject(Object.assign(new Error('killed'), { statusCode: 400 }))
            : next(request),
      };
      const doomed = new LargeObjectStore(
        connect(server.connectionString, name, { additionalPolicies: [{ policy: dying, position: 'perCall' }] }),
        { concurrency: 1 },
      );
      await assert.rejects(doomed.put('p', 'blob', randomBytes(2_000_000)));
      assert.deepEqual(Buffer.from((await store.get('p', 'blob'))!), data, 'the old version is still whole');
      assert.equal(await store.collect('p', 'blob'), 1, 'the orphaned chunk of the failed write is collected');

      const info = (await store.info('p', 'blob'))!;
      await client.updateEntity(
        {
          partitionKey: 'p',
          rowKey: `blob ${info.version} 000001`,
          d03: { value: Buffer.from('x').toString('base64'), type: 'Binary' },
        },
        'Merge',
      );
      await assert.rejects(store.get('p', 'blob'), IntegrityError, 'a changed chunk fails the check');
      await client.deleteEntity('p', `blob ${info.version} 000002`);
      await assert.rejects(store.get('p', 'blob'), IntegrityError, 'a missing chunk fails the check');
    });

    test(`${kind}: period tables rotate whole tables and read across them in order`, async () => {
      const tables = new PeriodTables(servers.get(kind)!.connectionString, uniqueTableName('p').slice(0, 20), 'month');
      const month = (m: number) => new Date(Date.UTC(2026, m, 15));
      for (let m = 0; m < 5; m++)
        await (await tables.tableFor(month(m))).upsertEntity({ partitionKey: 'x', rowKey: String(m), m });
      const across: unknown[] = [];
      for await (const row of tables.readAcross(month(1), month(3))) across.push(row.rowKey);
      assert.deepEqual(across, ['1', '2', '3']);
      assert.equal((await tables.rotate(month(3))).length, 3);
      assert.equal((await tables.tables()).length, 2);
      await tables.rotate(month(12));
      assert.equal((await tables.tables()).length, 0);
    });
  }
});
