// The PostgreSQL row form of incoming properties (src/storage/postgres/codec.ts encodeIncoming):
// made straight from the stored text the request path made, it is byte for byte the form made
// from the decoded properties, over random and hostile bodies, and falls back to that where
// jsonb needs the codec's escapes (U+0000, unpaired surrogates, the Double -0).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRandom } from '../../src/domain/random.js';
import { decodeEntityBody } from '../../src/table/wire/entity-json.js';
import { decodeEntity } from '../../src/table/wire/entity-text.js';
import { encodeIncoming, encodeProperties, incomingText } from '../../src/storage/postgres/codec.js';
import { randomEntityBody } from '../helpers/entity-bodies.js';

/**
 * Whether `text` is a body the service accepts; if so, checks both forms agree and says whether the stored text was
 * used.
 */
function check(text: string): boolean | undefined {
  let record;
  try {
    record = decodeEntityBody(text).properties;
  } catch {
    return undefined;
  }
  const body = decodeEntity(text);
  const incoming = { properties: record, stored: body.stored };
  assert.deepEqual(encodeIncoming(incoming), encodeProperties(record), `body: ${text.slice(0, 300)}`);
  return incomingText(incoming) !== undefined;
}

describe('PostgreSQL codec: incoming properties from their stored text', () => {
  test('the same row form as from decoded properties, on 4,000 random bodies', () => {
    const random = seededRandom(21);
    let accepted = 0;
    let direct = 0;
    for (let i = 0; i < 4000; i++) {
      const used = check(randomEntityBody(random));
      if (used !== undefined) accepted++;
      if (used === true) direct++;
    }
    assert.ok(
      accepted > 400 && direct > accepted / 2,
      `${direct} of ${accepted} accepted bodies written from their text`,
    );
  });

  test('escapes jsonb needs, and look-alikes inside strings', () => {
    const cases: [string, boolean][] = [
      ['{}', true],
      ['{"A":1}', true],
      ['{"A":1,"B":"x"}', true],
      ['{"A@odata.type":"Edm.Double","A":-0.0}', false],
      ['{"A":-0.5,"B":-0.0}', false],
      ['{"A":"a\\u0000b"}', false],
      ['{"A":"lone \\ud800"}', false],
      ['{"A":"lone \\udc00 low","B":1}', false],
      ['{"A":"pair \\ud83d\\ude00"}', true],
      ['{"A":"looks like :-0.0, but is text"}', false],
      ['{"A":"\\\\u0000 is six characters"}', false],
      ['{"A":-0.5,"B":0}', true],
    ];
    for (const [properties, direct] of cases) {
      assert.equal(
        check(`{"PartitionKey":"p","RowKey":"r",${properties.slice(1)}`.replace(',}', '}')),
        direct,
        properties,
      );
    }
  });
});
