// Key templates sort as their values do, for every codec: checked on seeded random values in
// memory, and on both servers by reading the keys back in the service's own order.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  codecs,
  compareOrdinal,
  forbiddenKeyCharacters,
  joinComponents,
  keys,
  prefixRange,
  rawPages,
  submitBatch,
  type KeyCodec,
} from '../src/index.js';
import { newTable, seededRandom, serverKinds, serversForFile } from './fixtures.js';

type Gen<T> = (random: () => number) => T;

const int = (random: () => number, min: number, max: number) => min + Math.floor(random() * (max - min + 1));

/** Strings over an alphabet rich in characters that need escaping, plus random BMP and astral characters. */
const tricky = [
  '',
  ' ',
  '!',
  '"',
  '#',
  '.',
  '/',
  '>',
  '?',
  '[',
  '\\',
  '~',
  '\u007f',
  '\u0085',
  '\u009f',
  '\u00a0',
  '\t',
  '\n',
  '\u0000',
  'a',
  'A',
  'z',
  '0',
  '9',
  "'",
  '\uffff',
  '\ud83d\ude00',
];
const text: Gen<string> = (random) => {
  let out = '';
  const length = int(random, 0, 8);
  for (let i = 0; i < length; i++) {
    const pick = random();
    if (pick < 0.6) out += tricky[int(random, 0, tricky.length - 1)];
    else if (pick < 0.9) out += String.fromCharCode(int(random, 0x20, 0x17f));
    else out += String.fromCharCode(int(random, 0xa0, 0xd7ff));
  }
  return out;
};

const dateGen: Gen<Date> = (random) => new Date(int(random, Date.UTC(1, 0, 1), Date.UTC(9999, 11, 31)));
const bigGen: Gen<bigint> = (random) => {
  const edge = [-(1n << 63n), (1n << 63n) - 1n, 0n, -1n, 1n];
  if (random() < 0.1) return edge[int(random, 0, edge.length - 1)]!;
  return BigInt.asIntN(64, (BigInt(int(random, 0, 2 ** 31)) << 33n) ^ BigInt(int(random, 0, 2 ** 31)));
};
const doubleGen: Gen<number> = (random) => {
  const edge = [
    0,
    -0,
    Infinity,
    -Infinity,
    Number.MIN_VALUE,
    -Number.MIN_VALUE,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    1,
    -1,
  ];
  if (random() < 0.15) return edge[int(random, 0, edge.length - 1)]!;
  return (random() - 0.5) * 10 ** int(random, -300, 300);
};
const hex = (random: () => number, n: number) =>
  Array.from({ length: n }, () => '0123456789abcdefABCDEF'[int(random, 0, 21)]).join('');

/** Every codec the toolkit offers, with a generator of its values. */
const cases: [string, KeyCodec<any>, Gen<unknown>][] = [
  ['text', codecs.text(), text],
  ['uint(6)', codecs.uint(6), (r) => int(r, 0, 999_999)],
  ['invertedUint(6)', codecs.invertedUint(6), (r) => int(r, 0, 999_999)],
  ['int(9)', codecs.int(9), (r) => int(r, -999_999_999, 999_999_999)],
  ['int64', codecs.int64(), bigGen],
  ['invertedInt64', codecs.invertedInt64(), bigGen],
  ['ticks', codecs.ticks(), dateGen],
  ['invertedTicks', codecs.invertedTicks(), dateGen],
  ['day', codecs.day(), dateGen],
  ['double', codecs.double(), doubleGen],
  ['guid', codecs.guid(), (r) => `${hex(r, 8)}-${hex(r, 4)}-${hex(r, 4)}-${hex(r, 4)}-${hex(r, 12)}`],
  ['boolean', codecs.boolean(), (r) => r() < 0.5],
];

function sample(gen: Gen<unknown>, seed: number, count: number): unknown[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => gen(random));
}

/** Checks that ordinal order of the encodings is the codec's order of the values. */
function assertOrderPreserved(
  codec: KeyCodec<any>,
  values: unknown[],
  encode: (v: any) => string = (v) => codec.encode(v),
): void {
  const encoded = values.map((value) => ({ value, key: encode(value) }));
  encoded.sort((a, b) => compareOrdinal(a.key, b.key));
  for (let i = 1; i < encoded.length; i++) {
    const [a, b] = [encoded[i - 1]!, encoded[i]!];
    const byValue = codec.compare(a.value, b.value);
    const byKey = compareOrdinal(a.key, b.key);
    assert.ok(
      Math.sign(byValue) === Math.sign(byKey),
      `${codec.name}: ${String(a.value)} vs ${String(b.value)} compare ${byValue} but keys ${JSON.stringify(a.key)} ${JSON.stringify(b.key)} compare ${byKey}`,
    );
  }
}

describe('key codecs (in memory, seeded random values)', () => {
  for (const [name, codec, gen] of cases) {
    test(`${name}: order preserved, reversible, only allowed characters`, () => {
      const values = sample(gen, 1234, 3000);
      assertOrderPreserved(codec, values);
      for (const value of values) {
        const key = codec.encode(value);
        assert.ok(!forbiddenKeyCharacters.test(key), `${name}: ${JSON.stringify(key)} holds a forbidden character`);
        assert.ok(!key.includes(' '), `${name}: ${JSON.stringify(key)} holds the separator`);
        assert.equal(
          codec.compare(codec.decode(key), value),
          0,
          `${name}: ${String(value)} does not survive a round trip`,
        );
        if (name === 'text') assert.equal(codec.decode(key), value);
      }
    });
  }

  test('compound keys sort as tuples (first component, then the next)', () => {
    const random = seededRandom(99);
    const t = codecs.text();
    const u = codecs.uint(3);
    const tuples = Array.from({ length: 2000 }, () => [text(random), int(random, 0, 999)] as const);
    const tupleCodec: KeyCodec<readonly [string, number]> = {
      name: 'tuple',
      encode: ([a, b]) => joinComponents([t.encode(a), u.encode(b)]),
      decode: () => assert.fail(),
      compare: (x, y) => compareOrdinal(x[0], y[0]) || x[1] - y[1],
    };
    assertOrderPreserved(tupleCodec, tuples);
    // A prefix range holds exactly the tuples with that first component.
    for (const [first] of tuples.slice(0, 200)) {
      const range = prefixRange([t.encode(first)]);
      for (const other of tuples) {
        const key = tupleCodec.encode(other);
        assert.equal(
          key >= range.ge && key < range.lt,
          other[0] === first,
          `${JSON.stringify(first)} range vs ${JSON.stringify(other[0])}`,
        );
      }
    }
  });

  test('out-of-domain values are refused', () => {
    assert.throws(() => codecs.uint(3).encode(1000));
    assert.throws(() => codecs.uint(3).encode(-1));
    assert.throws(() => codecs.int(3).encode(1.5));
    assert.throws(() => codecs.int64().encode(1n << 63n));
    assert.throws(() => codecs.double().encode(NaN));
    assert.throws(() => codecs.text().encode('\ud800x'));
    assert.throws(() => codecs.ticks().encode(new Date(Date.UTC(10000, 0, 1))));
    assert.throws(() => codecs.text().decode('!z'));
  });
});

describe('key codecs against the servers: the service orders the keys as the values', () => {
  const servers = serversForFile();
  for (const kind of serverKinds) {
    test(`${kind}: every codec, 200 seeded values each, read back in key order`, async () => {
      const server = servers.get(kind)!;
      const { client } = await newTable(server, 'KeyOrder');
      for (const [index, [name, codec, gen]] of cases.entries()) {
        const partitionKey = `codec${index}`;
        const values = sample(gen, 777 + index, 200);
        const byKey = new Map(values.map((value) => [codec.encode(value), value]));
        const rows = [...byKey.keys()].map((rowKey) => ({ partitionKey, rowKey }));
        for (let i = 0; i < rows.length; i += 100)
          await submitBatch(
            client,
            rows.slice(i, i + 100).map((row) => ['upsert', row, 'Replace']),
          );
        const returned: string[] = [];
        for await (const page of rawPages(client, {
          filter: keys.partitionKey('eq', partitionKey),
          select: ['RowKey'],
        }))
          returned.push(...page.items.map((row) => row.rowKey));
        assert.equal(returned.length, byKey.size, `${name}: every key came back`);
        const inValueOrder = [...byKey.entries()].sort((a, b) => codec.compare(a[1], b[1])).map(([key]) => key);
        assert.deepEqual(returned, inValueOrder, `${name}: service order differs from value order`);
      }
    });
  }
});
