// The heavy-hitter counter behind partition series and insights keeps space-saving's guarantees
// whatever the stream: every key heavier than total / capacity is kept, and a kept key's count
// brackets its true weight (count - error <= true <= count). Random skewed streams, seeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TopCounter } from '../../src/observe/top-counter.js';
import { runSeed, seededRandom } from '../query/random.js';

test('space-saving guarantees hold on random skewed streams', () => {
  const seed = runSeed();
  const random = seededRandom(seed);
  for (let round = 0; round < 20; round++) {
    const capacity = 1 + random.int(16);
    const counter = new TopCounter<number>(capacity);
    const truth = new Map<string, number>();
    let total = 0;
    const keys = 5 + random.int(200);
    for (let i = 0; i < 2000; i++) {
      // Skewed: small keys come up far more often (k = keys / uniform(1…keys)).
      const key = `k${Math.floor(keys / (1 + random.int(keys)))}`;
      const weight = random.chance(0.1) ? random.int(100) : 1;
      counter.add(key, weight, () => 0);
      truth.set(key, (truth.get(key) ?? 0) + weight);
      total += weight;
    }
    const kept = new Map(counter.top().map((entry) => [entry.key, entry]));
    assert.ok(kept.size <= capacity, `seed ${seed}`);
    for (const [key, weight] of truth) {
      const entry = kept.get(key);
      if (weight > total / capacity)
        assert.ok(entry !== undefined, `seed ${seed}: heavy key ${key} (${weight} of ${total}) lost`);
      if (entry !== undefined) {
        assert.ok(
          entry.count >= weight && entry.count - entry.error <= weight,
          `seed ${seed}: ${key} ${weight} vs ${entry.count}-${entry.error}`,
        );
      }
    }
    const counts = counter.top().map((entry) => entry.count);
    assert.deepEqual(
      counts,
      [...counts].sort((a, b) => b - a),
    );
  }
});

test('sample and hold: over many light keys, a heavy one still gets in and is counted from then on', () => {
  const seed = runSeed();
  const random = seededRandom(seed);
  const counter = new TopCounter<number>(32, 16);
  let heavy = 0;
  for (let i = 0; i < 20_000; i++) {
    // One event in five is the heavy key; the rest spread over 1,000 keys.
    const key = random.chance(0.2) ? 'heavy' : `k${random.int(1000)}`;
    if (key === 'heavy') heavy++;
    counter.add(key, 1, () => 0);
  }
  const [top] = counter.top(1);
  assert.equal(top?.key, 'heavy', `seed ${seed}`);
  assert.ok(
    top!.count - top!.error <= heavy && top!.count >= heavy - 16 * 32,
    `seed ${seed}: ${heavy} vs ${top!.count}-${top!.error}`,
  );
});
