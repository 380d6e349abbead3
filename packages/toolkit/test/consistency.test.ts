// Index rows never drift from their entities: concurrent writers change indexed attributes,
// delete and re-create entities while the client injects failures (before sending, and after the
// service applied a request), then every partition is checked row by row.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  codecs,
  defineModel,
  isDeleting,
  IndexedTable,
  IndexEntityTable,
  keys,
  rawPages,
  statusOf,
  t,
  wireString,
} from '../src/index.js';
import { newTable, seededRandom, serverKinds, serversForFile, testRetry } from './fixtures.js';

const Person = defineModel({
  kind: 'person',
  schema: {
    team: t.string(),
    id: t.int32(),
    email: t.string(),
    lastName: t.string(),
    grade: t.int32(),
    salary: t.int64(),
  },
  partitionKey: ['team'],
  rowKey: [{ literal: 'person' }, { field: 'id', codec: codecs.uint(4) }],
});

const lastNames = ['Hall', 'Cao', "O'Brien", 'Smith/Jones', 'Ng'];
const entityCount = 6;
const writers = 8;
const operationsPerWriter = 10;

function person(id: number, random: () => number) {
  return {
    team: 'core',
    id,
    email: `p${id}-${Math.floor(random() * 1e6)}@x.com`,
    lastName: lastNames[Math.floor(random() * lastNames.length)]!,
    grade: Math.floor(random() * 4),
    salary: BigInt(Math.floor(random() * 1e6)),
  };
}

/** Runs `writers` concurrent loops of `operationsPerWriter` random operations. */
async function hammer(operation: (random: () => number, id: number) => Promise<void>, seed: number): Promise<void> {
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const random = seededRandom(seed + w);
      for (let i = 0; i < operationsPerWriter; i++) await operation(random, Math.floor(random() * entityCount));
    }),
  );
}

const ignoreConflict = (error: unknown) => {
  if (statusOf(error) !== 409) throw error;
};

describe('no drift under concurrency and injected failures', () => {
  const servers = serversForFile();

  for (const kind of serverKinds) {
    test(`${kind}: intra-partition index rows always match their entities`, async () => {
      const { client, faults } = await newTable(servers.get(kind)!, 'Drift', { probability: 0.2, seed: 11 });
      const people = new IndexedTable(
        client,
        Person,
        {
          email: { key: ['email'], unique: true },
          lastName: { key: ['lastName'] },
          grade: { key: ['grade', 'lastName'] },
        },
        { retry: testRetry(5), maxConflictRetries: 64 },
      );
      const setup = seededRandom(3);
      for (let id = 0; id < entityCount; id++) await people.create(person(id, setup));
      await hammer(async (random, id) => {
        const roll = random();
        if (roll < 0.1) await people.delete({ team: 'core', id });
        else if (roll < 0.2) await people.create(person(id, random)).catch(ignoreConflict);
        else
          await people.update({ team: 'core', id }, (current) => ({
            ...person(id, random),
            salary: current.salary + 1n,
          }));
      }, 100);
      faults!.enabled.value = false;
      assert.ok(
        faults!.counters.before > 0 && faults!.counters.after > 0,
        'failures were injected on both sides of the service',
      );
      assert.deepEqual(await people.verifyPartition({ team: 'core' }), [], 'index rows match their entities');
      for (const entity of await people.listPartition({ team: 'core' })) {
        const found = await people.findBy('email', { team: 'core', email: entity.email });
        assert.deepEqual(
          found.map((e) => e.id),
          [entity.id],
          `e-mail ${entity.email} finds exactly its entity`,
        );
      }

      // The check can fail: change an entity behind the index's back and it reports the drift.
      // (The writers' last operations may have deleted every entity: then one is made first.)
      if ((await people.listPartition({ team: 'core' })).length === 0) await people.create(person(0, setup));
      const victim = (await people.listPartition({ team: 'core' }))[0]!;
      await client.updateEntity(
        { partitionKey: victim.partitionKey, rowKey: victim.rowKey, email: 'changed@x.com' },
        'Merge',
      );
      assert.ok((await people.verifyPartition({ team: 'core' })).length > 0, 'a drifted index row is detected');
    });

    test(`${kind}: index entities always list exactly the entities with their value`, async () => {
      const { client, faults } = await newTable(servers.get(kind)!, 'ListDrift', { probability: 0.2, seed: 12 });
      const byLastName = new IndexEntityTable(client, Person, 'lastName', { retry: testRetry(6) });
      await hammer(async (random, id) => {
        const next = random() < 0.15 ? null : person(id, random);
        await byLastName.write({ team: 'core', id }, () => next);
      }, 200);
      faults!.enabled.value = false;
      assert.ok(faults!.counters.before + faults!.counters.after > 0, 'failures were injected');
      const entities = new Map<string, string>();
      const lists = new Map<string, string[]>();
      for await (const page of rawPages(client, { filter: keys.partitionKey('eq', 'core') })) {
        for (const row of page.items) {
          if (isDeleting(row)) continue;
          if (Person.isKind(row)) entities.set(row.rowKey, Person.fromEntity(row).lastName);
          else lists.set(row.rowKey, JSON.parse(wireString(row.rowKeys)!) as string[]);
        }
      }
      for (const name of lastNames) {
        const expected = [...entities]
          .filter(([, last]) => last === name)
          .map(([rowKey]) => rowKey)
          .sort();
        const listed = lists.get(byLastName.listRowKey(name)) ?? [];
        assert.deepEqual([...listed].sort(), expected, `the list for ${name}`);
        lists.delete(byLastName.listRowKey(name));
      }
      assert.equal(lists.size, 0, 'no list row for a value nobody has');
    });
  }
});
