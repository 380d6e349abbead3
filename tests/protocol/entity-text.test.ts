// The one-pass body decoder (entity-text.ts) against the reader of record (entity-json.ts +
// stored-json.ts), over random and hostile bodies: same keys, byte-identical stored text, the
// same lazily decoded properties, and for every refused body the same error code and message.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRandom } from '../../src/domain/random.js';
import { entitySizeBytes } from '../../src/domain/entity.js';
import { TableError } from '../../src/errors.js';
import { decodeEntityBody } from '../../src/protocol/entity-json.js';
import { decodeEntity, transcodeOrUndefined } from '../../src/protocol/entity-text.js';
import { encodeStoredProperties } from '../../src/storage/stored-json.js';

type Outcome =
  | { readonly ok: true; readonly partitionKey?: string; readonly rowKey?: string; readonly json: string; readonly size: number; readonly count: number }
  | { readonly ok: false; readonly code: string; readonly message: string };

function recordOutcome(text: string): Outcome {
  try {
    const { partitionKey, rowKey, properties } = decodeEntityBody(text);
    const size = entitySizeBytes(partitionKey ?? '', rowKey ?? '', properties);
    return { ok: true, partitionKey, rowKey, json: encodeStoredProperties(properties), size, count: properties.size };
  } catch (error) {
    assert(error instanceof TableError, `decodeEntityBody threw ${String(error)}`);
    return { ok: false, code: error.code, message: error.message };
  }
}

function newOutcome(text: string): Outcome {
  try {
    const body = decodeEntity(text);
    const size = 4 + 2 * ((body.partitionKey ?? '').length + (body.rowKey ?? '').length) + body.stored.propertyBytes;
    return { ok: true, partitionKey: body.partitionKey, rowKey: body.rowKey, json: body.stored.json, size, count: body.stored.count };
  } catch (error) {
    assert(error instanceof TableError, `decodeEntity threw ${String(error)}`);
    return { ok: false, code: error.code, message: error.message };
  }
}

/** Both paths agree; returns whether the one-pass path took the body itself. */
function assertSame(text: string): boolean {
  const expected = recordOutcome(text);
  assert.deepEqual(newOutcome(text), expected, `body: ${text.slice(0, 300)}`);
  const fast = transcodeOrUndefined(text);
  if (fast !== undefined) {
    assert(expected.ok, `the one-pass path accepted a body the reader refuses: ${text.slice(0, 300)}`);
    // Lazily decoded properties are the reader's own.
    assert.deepEqual(fast.properties, decodeEntityBody(text).properties);
  }
  return fast !== undefined;
}

const q = (text: string): string => JSON.stringify(text);
const member = (name: string, valueJson: string): string => `${q(name)}:${valueJson}`;
const annotation = (name: string, type: string): string => member(`${name}@odata.type`, q(type));

/** Value spellings by EDM type: canonical, non-canonical but valid, and invalid. */
const literals: Record<string, readonly string[]> = {
  'Edm.String': ['"plain"', '""', '"é ü 中文"', '"😀𝒜"', '"a\\"b\\\\c\\/d\\n\\t\\u00e9"', '"\\ud83d\\ude00"', '"\\ud800 lone"', '"\\udc00"',
    '"x@odata.type\\":\\"Edm.Int64\\","', '"\u2028\u2029"', '"\u0001"', '"\\x"', '"\\u12"', '5', 'true', '[1]', '{"a":1}'],
  'Edm.Int32': ['0', '5', '-5', '-0', '2147483647', '2147483648', '-2147483648', '-2147483649', '1e2', '5.0', '"5"', '"+5"', '"007"', '" 5"', '"abc"', '00', '123456789', '1234567890'],
  'Edm.Int64': ['"123"', '"-0"', '"007"', '"+5"', '"0"', '"9223372036854775807"', '"9223372036854775808"', '"-9223372036854775808"', '123', '"12345678901234567890"', '"123456789012345678"', '"1.5"', '1.5'],
  'Edm.Double': ['1.5', '2.0', '1e300', '1e400', '-0.0', '0.1', '1E+24', '"NaN"', '"Infinity"', '"-Infinity"', '"INF"', '"-INF"', '5', '"1.50"', '".5"', '"5."', '"abc"', 'true', '-1.25e-7'],
  'Edm.Boolean': ['true', 'false', '"true"', '"false"', '"yes"', '1', 'null'],
  'Edm.DateTime': ['"2024-01-01T00:00:00.000Z"', '"2024-02-29T12:34:56.1234567Z"', '"2023-02-29T00:00:00Z"', '"1600-12-31T23:59:59Z"',
    '"1601-01-01T00:00:00Z"', '"9999-12-31T23:59:59.9999999Z"', '"2024-01-01T00:00:00.12345678Z"', '"2024-01-01T00:00:00+01:00"',
    '"2024-01-01T00:00"', '"2024-01-01"', '"2024-13-01T00:00:00Z"', '"2024-01-01T24:00:00Z"', '"2024-01-01T00:00:60Z"',
    '"2024-04-31T00:00:00Z"', '"2000-02-29T00:00:00.1000000Z"', '"1900-02-29T00:00:00Z"', '"2024-01-01T00:00:00.0Z"', '5'],
  'Edm.Guid': ['"0f8fad5b-d9cb-469f-a165-70867728950e"', '"0F8FAD5B-D9CB-469F-A165-70867728950E"', '"0f8fad5b-d9cb-469f-a165-7086772895"', '"{0f8fad5b-d9cb-469f-a165-70867728950e}"', '5'],
  'Edm.Binary': ['""', '"QQ=="', '"QR=="', '"QUI="', '"QUJ="', '"QUJD"', '"QUJ"', '"Q===", "QQ"', '"////"', '"AP8="', '"AP9="', '5'],
};
const types = Object.keys(literals);

const goodNames = ['Name', 'Age', '_x', 'é', '𝒜x', 'Ωmega', 'a1'];
const badNames = ['1abc', 'a-b', '', 'a b', 'x@odata.typeY', '\\u0041ge', 'A@odata.type@odata.type'];
const keyValues = ['"p"', '""', '"a/b"', '"with space"', '"é😀"', '"\\u0041"', 'null', '5', '"x\\u0000"', '"\\ud800"'];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** A body of random members; mostly plausible, sometimes hostile. */
function randomBody(random: () => number): string {
  const members: string[] = [];
  if (random() < 0.95) members.push(member('PartitionKey', random() < 0.85 ? '"pk"' : pick(random, keyValues)));
  if (random() < 0.95) members.push(member('RowKey', random() < 0.85 ? '"rk"' : pick(random, keyValues)));
  if (random() < 0.05) members.push(annotation('PartitionKey', pick(random, ['Edm.String', 'Edm.Int32'])));
  const count = Math.floor(random() * 12);
  for (let i = 0; i < count; i++) {
    const roll = random();
    const name = roll < 0.9 ? `${pick(random, goodNames)}${i}` : pick(random, badNames);
    const type = pick(random, types);
    const canonical = random() < 0.5;
    const literal = canonical ? literals[type]![0]! : pick(random, literals[type]!);
    const annotated = type === 'Edm.String' || type === 'Edm.Boolean' ? random() < 0.3 : random() < 0.9;
    const value = name.startsWith('\\') ? `${q(name).slice(0, 1)}${name}":${literal}` : member(name, literal);
    if (!annotated) members.push(value);
    else if (random() < 0.8) members.push(annotation(name, type), value);
    else members.push(value, annotation(name, type));
    if (random() < 0.03) members.push(annotation(`${name}z`, type)); // no value
    if (random() < 0.03) members.push(annotation(name, 'Edm.Foo'));
    if (random() < 0.03) members.push(member(name, '1')); // repeated
  }
  if (random() < 0.1) members.push(member('odata.metadata', '"http://x/$metadata#t/@Element"'));
  if (random() < 0.05) members.push(member('odata.etag', '{"nested":[1,2]}'));
  if (random() < 0.1) members.push(member('Timestamp', '"2024-01-01T00:00:00Z"'), annotation('Timestamp', 'Edm.DateTime'));
  if (random() < 0.05) members.push(member('Nothing', 'null'));
  for (let i = members.length - 1; i > 0; i--) {
    if (random() < 0.2) {
      const j = Math.floor(random() * (i + 1));
      [members[i], members[j]] = [members[j]!, members[i]!];
    }
  }
  const separator = random() < 0.1 ? ' ,\n\t' : ',';
  let text = `{${members.join(separator)}}`;
  const syntax = random();
  if (syntax < 0.02) text = `\ufeff${text}`;
  else if (syntax < 0.04) text = `${text.slice(0, -1)},}`;
  else if (syntax < 0.06) text = text.slice(0, Math.floor(random() * text.length));
  else if (syntax < 0.08) text = `${text} x`;
  else if (syntax < 0.1) text = ` \r\n${text}\n `;
  return text;
}

describe('entity-text: one pass from body to stored text', () => {
  test('agrees with decodeEntityBody + encodeStoredProperties on 4,000 random bodies', () => {
    const seed = 15;
    const random = seededRandom(seed);
    let accepted = 0;
    let fast = 0;
    for (let i = 0; i < 4000; i++) {
      const text = randomBody(random);
      if (assertSame(text)) fast++;
      if (recordOutcome(text).ok) accepted++;
    }
    // Both outcomes and both paths are exercised (seed ${seed}).
    assert(accepted > 400 && accepted < 3600, `accepted ${accepted}`);
    assert(fast > accepted / 3, `fast ${fast} of ${accepted}`);
  });

  test('the bodies SDKs send take the one-pass path', () => {
    const sdk =
      '{"PartitionKey":"p","RowKey":"r","Name":"customer 1 abc","Bucket":1,"Counter@odata.type":"Edm.Int64","Counter":"4295967299",' +
      '"Price":1.375,"Active":false,"Created@odata.type":"Edm.DateTime","Created":"2024-01-02T00:00:00.123Z",' +
      '"Id@odata.type":"Edm.Guid","Id":"00070e15-1c23-4a31-a3f4-5d6b727988a5","Blob@odata.type":"Edm.Binary","Blob":"AAcOFQ=="}';
    assert(assertSame(sdk));
    const python = '{"PartitionKey": "p", "RowKey": "r", "Text": "caf\\u00e9 \\ud83d\\ude00", "Whole@odata.type": "Edm.Double", "Whole": 2.0}';
    assert(assertSame(python));
  });

  test('limits: string and binary lengths, property count, entity size', () => {
    const longString = 'x'.repeat(32 * 1024);
    for (const text of [
      `{"PartitionKey":"p","RowKey":"r","S":${q(longString)}}`,
      `{"PartitionKey":"p","RowKey":"r","S":${q(`${longString}x`)}}`,
      `{"PartitionKey":"p","RowKey":"r","B@odata.type":"Edm.Binary","B":${q(Buffer.alloc(64 * 1024).toString('base64'))}}`,
      `{"PartitionKey":"p","RowKey":"r","B@odata.type":"Edm.Binary","B":${q(Buffer.alloc(64 * 1024 + 1).toString('base64'))}}`,
      `{"PartitionKey":"p","RowKey":"r",${Array.from({ length: 252 }, (_, i) => `"P${i}":${i}`).join(',')}}`,
      `{"PartitionKey":"p","RowKey":"r",${Array.from({ length: 253 }, (_, i) => `"P${i}":${i}`).join(',')}}`,
      `{"PartitionKey":"p","RowKey":"r",${Array.from({ length: 253 }, (_, i) => `"P${i}":null`).join(',')}}`,
      `{"PartitionKey":"p","RowKey":"r",${Array.from({ length: 16 }, (_, i) => `"S${i}":${q(longString)}`).join(',')}}`,
      `{"PartitionKey":"p","RowKey":"r",${Array.from({ length: 15 }, (_, i) => `"S${i}":${q(longString)}`).join(',')}}`,
      `{"PartitionKey":${q('k'.repeat(1024))},"RowKey":${q('k'.repeat(1025))}}`,
      `{"PartitionKey":"p","RowKey":"r",${q('N'.repeat(255))}:1,${q('M'.repeat(256))}:1}`,
    ]) {
      assertSame(text);
    }
  });
});
