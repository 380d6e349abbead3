// The fast paths of entity encoding (splicing, stripping and picking members of the stored text)
// against the straightforward encoding from decoded values, byte for byte, over random entities.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EdmValue } from '../../../src/domain/edm.js';
import type { Entity, Properties } from '../../../src/domain/entity.js';
import {
  forEachMember,
  memberName,
  withoutAnnotations,
  withoutAnyAnnotations,
} from '../../../src/domain/json-members.js';
import {
  encodeEntity,
  encodeEntityFeed,
  encodeEntityFeedBytes,
  encodeMinimalProperties,
  entityEncoder,
  minimalJsonOf,
  type EntityUrlContext,
  type MetadataLevel,
} from '../../../src/table/wire/odata.js';
import { decodeStoredProperties, encodeStoredProperties } from '../../../src/storage/stored-json.js';
import { seededRandom } from '../../../src/domain/random.js';
import { StoredEntity } from '../../../src/storage/lazy-entity.js';
import { scaled } from '../../helpers/scale.js';

const ctx: EntityUrlContext = {
  baseUrl: 'http://127.0.0.1:10002/devstoreaccount1',
  account: 'devstoreaccount1',
  table: 'fast',
};
const levels: readonly MetadataLevel[] = ['none', 'minimal', 'full'];

// Text meant to confuse a scanner that slices JSON: annotation look-alikes, quotes, backslashes,
// escapes, control characters, astral and lone-surrogate-free non-ASCII text.
const nasty = [
  '"x@odata.type":"Edm.Int64",',
  '@odata.type":"Edm.Double","',
  '\\',
  '\\"',
  '"',
  '",',
  '"}',
  ':',
  ',',
  '{',
  '}',
  '\u0000',
  '\u001f',
  '\n',
  '\u2028',
  '𝒜',
  '😀',
  'é',
  'Edm.Double',
  'plain',
];

function randomText(random: () => number, pieces: number): string {
  let text = '';
  for (let i = 0; i < pieces; i++) text += nasty[Math.floor(random() * nasty.length)];
  return text;
}

const specialDoubles = [NaN, Infinity, -Infinity, 0, -0, 1, -7, 2 ** 53, 1e21, 1.5e300, 5e-324, 0.1, -2.5];

function randomValue(random: () => number): EdmValue {
  switch (Math.floor(random() * 8)) {
    case 0:
      return { type: 'Edm.String', value: randomText(random, Math.floor(random() * 5)) };
    case 1:
      return { type: 'Edm.Int32', value: Math.floor(random() * 2 ** 32) - 2 ** 31 };
    case 2:
      return { type: 'Edm.Int64', value: BigInt(Math.floor(random() * 2 ** 53)) * (random() < 0.5 ? -1n : 1n) };
    case 3:
      return {
        type: 'Edm.Double',
        value: random() < 0.6 ? specialDoubles[Math.floor(random() * specialDoubles.length)]! : (random() - 0.5) * 1e6,
      };
    case 4:
      return { type: 'Edm.Boolean', value: random() < 0.5 };
    case 5:
      return {
        type: 'Edm.DateTime',
        value: BigInt(Math.floor(random() * 2 ** 50)) * 1000n + BigInt(Math.floor(random() * 1000)),
      };
    case 6:
      return { type: 'Edm.Guid', value: '0f8fad5b-d9cb-469f-a165-70867728950e' };
    default:
      return { type: 'Edm.Binary', value: Buffer.from(randomText(random, 3)) };
  }
}

/** Names the service accepts (letters of any script) and, for the encoder alone, hostile ones. */
function randomName(random: () => number, index: number): string {
  const roll = random();
  if (roll < 0.5) return `P${index}`;
  if (roll < 0.7) return `𝒜é_${index}`;
  return `n${index}${randomText(random, 2)}`;
}

function randomProperties(random: () => number): Properties {
  const properties: Properties = new Map();
  const count = Math.floor(random() * 9);
  for (let i = 0; i < count; i++) properties.set(randomName(random, i), randomValue(random));
  return properties;
}

function entityOf(properties: Properties, i: number, json?: string): Entity {
  const partitionKey = i % 3 === 0 ? "p'q é" : 'pk';
  return {
    partitionKey,
    rowKey: `r${i}😀`,
    timestamp: 16_000_000_000_000_000n + BigInt(i % 4),
    properties,
    json,
  };
}

/** The same entity as an engine reads it: its stored text, spliced at every level. */
function storedEntityOf(properties: Properties, i: number): Entity {
  const { partitionKey, rowKey, timestamp } = entityOf(properties, i);
  return new StoredEntity(partitionKey, rowKey, timestamp, encodeStoredProperties(properties));
}

describe('fast entity encoding equals encoding from values', () => {
  test(`stored text → minimal text → every level and $select, ${scaled(400)} random entities`, () => {
    const random = seededRandom(15);
    for (let i = 0; i < scaled(400); i++) {
      const properties = randomProperties(random);
      const stored = encodeStoredProperties(properties);
      const minimal = minimalJsonOf(stored);
      assert.equal(minimal, encodeMinimalProperties(properties), `seed 15 entity ${i}: minimalJsonOf`);
      assert.deepEqual(decodeStoredProperties(stored), properties, `entity ${i}: stored round trip`);
      assert.equal(withoutAnyAnnotations(stored), withoutAnnotations(stored), `entity ${i}: two strippers`);
      const plain = entityOf(properties, i);
      const fast = i % 2 === 0 ? entityOf(properties, i, minimal) : storedEntityOf(properties, i);
      const names = [...properties.keys()];
      const selects: Array<string[] | undefined> = [
        undefined,
        ['RowKey'],
        names.slice(0, 2),
        ['Missing', ...names.slice(1).reverse(), 'Timestamp', 'PartitionKey'],
        [...names, ...names],
      ];
      for (const level of levels) {
        for (const select of selects) {
          for (const single of [false, true]) {
            const expected = encodeEntity(plain, level, ctx, { select, single });
            assert.equal(
              encodeEntity(fast, level, ctx, { select, single }),
              expected,
              `entity ${i} ${level} ${JSON.stringify(select)}`,
            );
            JSON.parse(expected);
          }
        }
      }
    }
  });

  test('one encoder over a page gives what one encoder per entity gives', () => {
    const random = seededRandom(7);
    const page = Array.from({ length: 50 }, (_, i) => {
      const properties = randomProperties(random);
      return entityOf(properties, i, encodeMinimalProperties(properties));
    });
    for (const level of levels) {
      const encode = entityEncoder(level, ctx);
      for (const entity of page) assert.equal(encode(entity), encodeEntity({ ...entity, json: undefined }, level, ctx));
    }
  });
});

describe('feed bytes equal the feed text from values', () => {
  // Pages of random entities, some carrying their stored text and some not, at every level with
  // and without $select; the last page outgrows the writer's first buffer (a few MB).
  test('random pages, every level and $select', () => {
    const random = seededRandom(21);
    const pageSizes = [0, 1, 2, 7, 60, 3000];
    for (const size of pageSizes) {
      const plain: Entity[] = [];
      const fast: Entity[] = [];
      for (let i = 0; i < size; i++) {
        const properties = randomProperties(random);
        if (size > 100 && i % 2 === 0) properties.set('Big', { type: 'Edm.String', value: 'é'.repeat(1000) });
        plain.push(entityOf(properties, i));
        const roll = random();
        fast.push(
          roll < 0.4
            ? storedEntityOf(properties, i)
            : roll < 0.8
              ? entityOf(properties, i, minimalJsonOf(encodeStoredProperties(properties)))
              : entityOf(properties, i),
        );
      }
      const selects: Array<string[] | undefined> = [
        undefined,
        ['RowKey'],
        ['P1', 'Missing'],
        ['P0', 'Timestamp', 'PartitionKey'],
        ['Nothing'],
      ];
      for (const level of levels) {
        for (const select of selects) {
          const expected = encodeEntityFeed(level, ctx, plain.map(entityEncoder(level, ctx, { select })));
          // Released at once, so the next page reuses the buffer (dirty) where it fits.
          const { bytes, release } = encodeEntityFeedBytes(level, ctx, fast, { select });
          assert.equal(bytes.toString('utf8'), expected, `page of ${size} at ${level} ${JSON.stringify(select)}`);
          assert.equal(bytes.length, Buffer.byteLength(expected));
          release();
          JSON.parse(expected);
        }
      }
    }
  });

  test('a body not yet released shares no bytes with the bodies after it', () => {
    const entity = entityOf(new Map([['A', { type: 'Edm.Int64', value: 5n }]]), 0);
    const first = encodeEntityFeedBytes('full', ctx, [entity]);
    const copy = Buffer.from(first.bytes);
    for (let i = 0; i < 20; i++) encodeEntityFeedBytes('none', ctx, [entity, entity]).release();
    assert.deepEqual(first.bytes, copy);
    first.release();
    first.release(); // a second release does not put the buffer in the pool twice
    const [a, b] = [encodeEntityFeedBytes('full', ctx, [entity]), encodeEntityFeedBytes('full', ctx, [entity])];
    assert.notEqual(a.bytes.buffer, b.bytes.buffer);
  });
});

describe('json-members', () => {
  test('a string value holding annotation text is left alone', () => {
    const text = '{"A":"\\"B@odata.type\\":\\"Edm.Int64\\",","B@odata.type":"Edm.Int64","B":"5","C":"x@odata.type"}';
    const expected = '{"A":"\\"B@odata.type\\":\\"Edm.Int64\\",","B":"5","C":"x@odata.type"}';
    assert.equal(withoutAnnotations(text), expected);
    assert.equal(withoutAnyAnnotations(text), expected);
    const names: string[] = [];
    forEachMember(text, (keyStart, keyEnd) => names.push(memberName(text, keyStart, keyEnd)));
    assert.deepEqual(names, ['A', 'B@odata.type', 'B', 'C']);
  });

  test('escaped backslashes before a quote end the string', () => {
    const text = '{"A":"\\\\","D@odata.type":"Edm.DateTime","D":"2024-01-01T00:00:00Z","E":1.5,"F":true}';
    assert.equal(withoutAnnotations(text), '{"A":"\\\\","D":"2024-01-01T00:00:00Z","E":1.5,"F":true}');
    assert.equal(withoutAnyAnnotations(text), withoutAnnotations(text));
  });

  test('names with escapes are read back as names', () => {
    const text = JSON.stringify({ 'q"\\\u0001': 1 });
    forEachMember(text, (keyStart, keyEnd) => assert.equal(memberName(text, keyStart, keyEnd), 'q"\\\u0001'));
  });

  test('the empty object and malformed text', () => {
    assert.equal(withoutAnnotations('{}'), '{}');
    assert.equal(withoutAnyAnnotations('{}'), '{}');
    assert.throws(() => withoutAnyAnnotations('{"A@odata.type":"Edm.Int64"}'));
    assert.throws(() => forEachMember('{"A":"x}', () => {}));
    assert.throws(() => forEachMember('[1]', () => {}));
  });
});
