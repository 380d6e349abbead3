// The one-pass body decoder (wire/entity-text.ts) against the reader of record (wire/entity-json.ts +
// stored-json.ts), over random and hostile bodies: same keys, byte-identical stored text, the
// same lazily decoded properties, and for every refused body the same error code and message.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRandom } from '../../../src/domain/random.js';
import { entitySizeBytes } from '../../../src/domain/entity.js';
import { StorageError } from '../../../src/errors.js';
import { decodeEntityBody } from '../../../src/table/wire/entity-json.js';
import { decodeEntity, transcodeOrUndefined } from '../../../src/table/wire/entity-text.js';
import { encodeStoredProperties } from '../../../src/storage/stored-json.js';
import { randomEntityBody } from '../../helpers/entity-bodies.js';
import { scaled } from '../../helpers/scale.js';

type Outcome =
  | {
      readonly ok: true;
      readonly partitionKey?: string;
      readonly rowKey?: string;
      readonly json: string;
      readonly size: number;
      readonly count: number;
    }
  | { readonly ok: false; readonly code: string; readonly message: string };

function recordOutcome(text: string): Outcome {
  try {
    const { partitionKey, rowKey, properties } = decodeEntityBody(text);
    const size = entitySizeBytes(partitionKey ?? '', rowKey ?? '', properties);
    return { ok: true, partitionKey, rowKey, json: encodeStoredProperties(properties), size, count: properties.size };
  } catch (error) {
    assert(error instanceof StorageError, `decodeEntityBody threw ${String(error)}`);
    return { ok: false, code: error.code, message: error.message };
  }
}

function newOutcome(text: string): Outcome {
  try {
    const body = decodeEntity(text);
    const size = 4 + 2 * ((body.partitionKey ?? '').length + (body.rowKey ?? '').length) + body.stored.propertyBytes;
    return {
      ok: true,
      partitionKey: body.partitionKey,
      rowKey: body.rowKey,
      json: body.stored.json,
      size,
      count: body.stored.count,
    };
  } catch (error) {
    assert(error instanceof StorageError, `decodeEntity threw ${String(error)}`);
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

describe('entity-text: one pass from body to stored text', () => {
  test(`agrees with decodeEntityBody + encodeStoredProperties on ${scaled(4000)} random bodies`, () => {
    const seed = 15;
    const random = seededRandom(seed);
    let accepted = 0;
    let fast = 0;
    for (let i = 0; i < scaled(4000); i++) {
      const text = randomEntityBody(random);
      if (assertSame(text)) fast++;
      if (recordOutcome(text).ok) accepted++;
    }
    // Both outcomes and both paths are exercised (seed ${seed}).
    assert(accepted > scaled(400) && accepted < scaled(3600), `accepted ${accepted}`);
    assert(fast > accepted / 3, `fast ${fast} of ${accepted}`);
  });

  test('the bodies SDKs send take the one-pass path', () => {
    const sdk =
      '{"PartitionKey":"p","RowKey":"r","Name":"customer 1 abc","Bucket":1,"Counter@odata.type":"Edm.Int64","Counter":"4295967299",' +
      '"Price":1.375,"Active":false,"Created@odata.type":"Edm.DateTime","Created":"2024-01-02T00:00:00.123Z",' +
      '"Id@odata.type":"Edm.Guid","Id":"00070e15-1c23-4a31-a3f4-5d6b727988a5","Blob@odata.type":"Edm.Binary","Blob":"AAcOFQ=="}';
    assert(assertSame(sdk));
    const python =
      '{"PartitionKey": "p", "RowKey": "r", "Text": "caf\\u00e9 \\ud83d\\ude00", "Whole@odata.type": "Edm.Double", "Whole": 2.0}';
    assert(assertSame(python));
  });

  test('limits: string and binary lengths, property count, entity size', () => {
    const longString = 'x'.repeat(32 * 1024);
    const q = (text: string): string => JSON.stringify(text);
    for (const text of [
      `{"PartitionKey":"p","RowKey":"r","S":${JSON.stringify(longString)}}`,
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
