import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../../src/errors.js';
import { jsonDepthMax } from '../../../src/limits.js';
import { type JsonValue, readJson } from '../../../src/table/wire/json-reader.js';
import { scaled } from '../../helpers/scale.js';

/** The reader's tree as the plain value JSON.parse would give (numbers through Number). */
function toPlain(value: JsonValue): unknown {
  switch (value.kind) {
    case 'object':
      return Object.fromEntries(value.members.map(([name, member]) => [name, toPlain(member)]));
    case 'array':
      return value.items.map(toPlain);
    case 'number':
      return Number(value.text);
    case 'null':
      return null;
    default:
      return value.value;
  }
}

function assertStorageError(fn: () => unknown, code: string, messagePart?: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof StorageError, `expected a StorageError, got ${String(error)}`);
    assert.equal(error.code, code);
    if (messagePart !== undefined) assert.ok(error.message.includes(messagePart), error.message);
    return true;
  });
}

describe('readJson: values', () => {
  test('reads every kind, with member order kept', () => {
    const tree = readJson(' {"s":"x","n":-12.5e3,"t":true,"f":false,"z":null,"a":[1,{}],"o":{"k":[]}} ');
    assert.deepEqual(tree, {
      kind: 'object',
      members: [
        ['s', { kind: 'string', value: 'x' }],
        ['n', { kind: 'number', text: '-12.5e3' }],
        ['t', { kind: 'boolean', value: true }],
        ['f', { kind: 'boolean', value: false }],
        ['z', { kind: 'null' }],
        [
          'a',
          {
            kind: 'array',
            items: [
              { kind: 'number', text: '1' },
              { kind: 'object', members: [] },
            ],
          },
        ],
        ['o', { kind: 'object', members: [['k', { kind: 'array', items: [] }]] }],
      ],
    });
  });

  test('number literals keep their source text', () => {
    for (const text of [
      '2',
      '2.0',
      '-0',
      '0',
      '1E+24',
      '1e-7',
      '9223372036854775807',
      '123456789012345678901234567890',
    ]) {
      assert.deepEqual(readJson(text), { kind: 'number', text });
    }
  });

  test('string escapes, astral characters and lone surrogates', () => {
    const cases: Array<[string, string]> = [
      ['"a\\"b\\\\c\\/d"', 'a"b\\c/d'],
      ['"\\b\\f\\n\\r\\t"', '\b\f\n\r\t'],
      ['"\\u0041\\u00e9\\u20AC"', 'Aé€'],
      ['"\\ud83d\\ude00"', '😀'],
      ['"😀 raw"', '😀 raw'],
      ['"\\ud800"', '\ud800'],
      ['""', ''],
      ['"x\\u0000y"', 'x\u0000y'],
    ];
    for (const [text, expected] of cases) assert.deepEqual(readJson(text), { kind: 'string', value: expected }, text);
  });

  test('skips a leading byte-order mark and surrounding whitespace', () => {
    assert.deepEqual(readJson('\ufeff \t\r\n{}\n'), { kind: 'object', members: [] });
  });
});

describe('readJson: duplicates', () => {
  test('a member name twice in one object → DuplicatePropertiesSpecified', () => {
    assertStorageError(() => readJson('{"a":1,"a":2}'), 'DuplicatePropertiesSpecified', 'offset 7');
    assertStorageError(() => readJson('{"a":null,"b":1,"a":null}'), 'DuplicatePropertiesSpecified');
    assertStorageError(() => readJson('{"a":1,"\\u0061":2}'), 'DuplicatePropertiesSpecified');
    assertStorageError(
      () => readJson('{"x@odata.type":"Edm.Int64","x":"1","x@odata.type":"Edm.Int64"}'),
      'DuplicatePropertiesSpecified',
    );
    assertStorageError(() => readJson('[{"o":{"k":1,"k":1}}]'), 'DuplicatePropertiesSpecified');
  });

  test('names differing only in case, or in different objects, are not duplicates', () => {
    assert.deepEqual(toPlain(readJson('{"a":1,"A":2}')), { a: 1, A: 2 });
    assert.doesNotThrow(() => readJson('[{"a":1},{"a":1}]'));
    assert.doesNotThrow(() => readJson('{"a":{"a":1}}'));
  });
});

describe('readJson: errors', () => {
  const invalid: Array<[string, number]> = [
    ['', 0],
    ['  ', 2],
    ['{', 1],
    ['{"a" 1}', 5],
    ['{"a":}', 5],
    ['{"a":1,}', 7],
    ['{"a":1 "b":2}', 7],
    ['{a:1}', 1],
    ["{'a':1}", 1],
    ['[1,]', 3],
    ['[1 2]', 3],
    ['01', 1],
    ['1.', 2],
    ['.5', 0],
    ['-', 1],
    ['-a', 1],
    ['1e', 2],
    ['1e+', 3],
    ['+1', 0],
    ['tru', 0],
    ['nul', 0],
    ['NaN', 0],
    ['Infinity', 0],
    ['"abc', 4],
    ['"a\u0001b"', 2],
    ['"a\nb"', 2],
    ['"\\x"', 1],
    ['"\\u12G4"', 1],
    ['"\\u12"', 1],
    ['"\\', 1],
    ['{} x', 3],
    ['1 2', 2],
  ];
  for (const [text, offset] of invalid) {
    test(`rejects ${JSON.stringify(text)} at offset ${offset}`, () => {
      assertStorageError(() => readJson(text), 'InvalidInput', `offset ${offset}:`);
    });
  }

  test(`nesting: ${jsonDepthMax} levels pass, ${jsonDepthMax + 1} fail`, () => {
    const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
    assert.doesNotThrow(() => readJson(nested(jsonDepthMax)));
    assertStorageError(() => readJson(nested(jsonDepthMax + 1)), 'InvalidInput', 'nesting');
    const objects = (depth: number): string => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
    assert.doesNotThrow(() => readJson(objects(jsonDepthMax)));
    assertStorageError(() => readJson(objects(jsonDepthMax + 1)), 'InvalidInput', 'nesting');
  });

  test('a deeply nested hostile body fails cleanly, not with a stack overflow', () => {
    assertStorageError(() => readJson('['.repeat(1_000_000)), 'InvalidInput', 'nesting');
  });
});

describe('readJson: differential against JSON.parse', () => {
  // Deterministic xorshift so a failure can be replayed from the printed seed.
  function random(seed: number): () => number {
    let state = seed >>> 0 || 1;
    return () => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) / 2 ** 32;
    };
  }
  const seed = 20240601;
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const space = (): string => pick(['', '', ' ', '\n\t', '\r\n ']);
  const scalars = [
    '0',
    '-0',
    '12',
    '-3.25',
    '1e5',
    '2E-3',
    '1.5e+24',
    'true',
    'false',
    'null',
    '""',
    '"a\\"b"',
    '"\\u00e9\\ud83d\\ude00"',
    '"😀"',
    '"\\n\\t\\/"',
  ];

  function document(depth: number): string {
    const roll = next();
    if (depth >= 3 || roll < 0.5) return space() + pick(scalars) + space();
    const count = Math.floor(next() * 4);
    const parts: string[] = [];
    for (let i = 0; i < count; i++) {
      parts.push(
        roll < 0.75
          ? document(depth + 1)
          : `${space()}"${pick(['a', 'b', 'c', 'A'])}"${space()}:${document(depth + 1)}`,
      );
    }
    return roll < 0.75 ? `[${parts.join(',')}]` : `{${parts.join(',')}}`;
  }

  /** One random edit, so near-miss texts probe the error paths too. */
  function mutate(text: string): string {
    const at = Math.floor(next() * (text.length + 1));
    const piece = pick(['{', '}', '[', ']', ',', ':', '"', '\\', '-', '.', 'e', '0', '1', ' ', '\u0001', 'x']);
    switch (pick(['insert', 'delete', 'replace'])) {
      case 'insert':
        return text.slice(0, at) + piece + text.slice(at);
      case 'delete':
        return text.slice(0, at) + text.slice(at + 1);
      default:
        return text.slice(0, at) + piece + text.slice(at + 1);
    }
  }

  test('accepts exactly what JSON.parse accepts and yields the same value', () => {
    let accepted = 0;
    for (let i = 0; i < scaled(20_000); i++) {
      const valid = document(0);
      const text = next() < 0.5 ? valid : mutate(valid);
      let expected: unknown;
      let parses = true;
      try {
        expected = JSON.parse(text);
      } catch {
        parses = false;
      }
      const where = `seed ${seed}, case ${i}: ${JSON.stringify(text)}`;
      let tree: JsonValue;
      try {
        tree = readJson(text);
      } catch (error) {
        assert.ok(error instanceof StorageError, `${where} threw ${String(error)}`);
        if (error.code !== 'DuplicatePropertiesSpecified') assert.ok(!parses, `${where} rejected: ${error.message}`);
        continue;
      }
      assert.ok(parses, `${where} accepted`);
      assert.deepEqual(toPlain(tree), expected, where);
      accepted++;
    }
    assert.ok(accepted > scaled(5_000), `only ${accepted} documents were valid: the generator is too weak`);
  });
});
