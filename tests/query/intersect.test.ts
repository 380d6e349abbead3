import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { keyInRange } from '../../src/http/sas.js';
import { intersectRanges } from '../../src/table/query/index.js';
import { runSeed, seededRandom, type Random } from './random.js';
import { type KeyBound, type KeyRange } from '../../src/domain/keys.js';
import { scaled } from '../helpers/scale.js';

const letters = ['', 'a', 'b', 'c'];
/** Every key over a small alphabet: enough to hit every edge of every bound. */
const keys = letters.flatMap((partitionKey) => letters.map((rowKey) => ({ partitionKey, rowKey })));

function randomBound(random: Random): KeyBound | undefined {
  if (random.chance(0.25)) return undefined;
  const partitionKey = random.pick(letters);
  const inclusive = random.chance(0.5);
  return random.chance(0.4) ? { partitionKey, inclusive } : { partitionKey, rowKey: random.pick(letters), inclusive };
}

function randomRange(random: Random): KeyRange {
  const lower = randomBound(random);
  const upper = randomBound(random);
  return { ...(lower && { lower }), ...(upper && { upper }) };
}

describe('intersectRanges', () => {
  test('a SAS key range narrows every plan range, edges included (inclusive bounds)', () => {
    const sas: KeyRange = {
      lower: { partitionKey: 'b', rowKey: 'a', inclusive: true },
      upper: { partitionKey: 'c', inclusive: true },
    };
    assert.deepEqual(intersectRanges([{}], sas), [sas]);
    assert.deepEqual(
      intersectRanges(
        [{ upper: { partitionKey: 'b', inclusive: true } }, { lower: { partitionKey: 'z', inclusive: true } }],
        sas,
      ),
      [{ lower: sas.lower, upper: { partitionKey: 'b', inclusive: true } }],
    );
  });

  test('a range wholly outside is dropped; touching at an exclusive end is empty', () => {
    const sas: KeyRange = { lower: { partitionKey: 'b', inclusive: true } };
    assert.deepEqual(intersectRanges([{ upper: { partitionKey: 'b', inclusive: false } }], sas), []);
    assert.deepEqual(intersectRanges([{ upper: { partitionKey: 'a', rowKey: 'z', inclusive: true } }], sas), []);
  });

  const seed = runSeed();
  test(`matches keyInRange on every key of random ranges (seed ${seed})`, () => {
    const random = seededRandom(seed);
    for (let trial = 0; trial < scaled(2000); trial++) {
      const ranges = Array.from({ length: 1 + random.int(3) }, () => randomRange(random));
      const limit = randomRange(random);
      const narrowed = intersectRanges(ranges, limit);
      for (const { partitionKey, rowKey } of keys) {
        const expected =
          keyInRange(limit, partitionKey, rowKey) && ranges.some((range) => keyInRange(range, partitionKey, rowKey));
        const actual = narrowed.some((range) => keyInRange(range, partitionKey, rowKey));
        assert.equal(actual, expected, JSON.stringify({ ranges, limit, partitionKey, rowKey, narrowed }));
      }
    }
  });
});
