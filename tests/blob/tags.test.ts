// Blob index tags' pure parts: the tag rules, the x-ms-tags header, the Tags document, and the two
// expression grammars (Find Blobs by Tags' `where`, x-ms-if-tags) with their evaluation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../src/errors.js';
import { matches, parseTagCondition, parseWhere, tagMap, TagExpressionError } from '../../src/blob/tags/expression.js';
import { parseTagsHeader, parseTagsXml, writeTagsXml } from '../../src/blob/tags/tag-set.js';

const code = (action: () => unknown): string | undefined => {
  try {
    action();
  } catch (error) {
    if (error instanceof StorageError) return error.code;
    if (error instanceof TagExpressionError) return 'expression';
    throw error;
  }
  return undefined;
};

test('tag sets: the header and the document, and the rules', () => {
  assert.deepEqual(parseTagsHeader('a%20b=c%2Bd&e='), [
    ['a b', 'c+d'],
    ['e', ''],
  ]);
  assert.deepEqual(parseTagsHeader(''), []);
  const xml = writeTagsXml([['k', 'v']]);
  assert.deepEqual(parseTagsXml(xml), [['k', 'v']]);
  assert.deepEqual(parseTagsXml('<Tags><TagSet/></Tags>'), []);
  assert.equal(
    code(() => parseTagsHeader('a=1&a=2')),
    'InvalidTag',
  );
  assert.equal(
    code(() => parseTagsHeader('a=%ZZ')),
    'InvalidTag',
  );
  assert.equal(
    code(() => parseTagsHeader('=v')),
    'InvalidTag',
  );
  assert.equal(
    code(() => parseTagsHeader('k=it%27s')),
    'InvalidTag',
  );
  assert.equal(
    code(() => parseTagsXml('<Other/>')),
    'InvalidXmlDocument',
  );
});

test('where: AND only, = and ranges, @container once, ranges from opposite sides', () => {
  const where = parseWhere(`"a" = '1' AND b >= '2' AND b < '5' and @container = 'c'`);
  assert.equal(where.container, 'c');
  assert.deepEqual(
    where.predicates.map((p) => `${p.key}${p.operator}${p.value}`),
    ['a=1', 'b>=2', 'b<5'],
  );
  for (const bad of [
    `a = '1' OR b = '2'`,
    `a <> '1'`,
    `(a = '1')`,
    `a > '1' AND a >= '2'`,
    `@container = 'x'`,
    `@container = 'x' AND @container = 'y' AND a = '1'`,
    `@other = 'x' AND a = '1'`,
    `a = 1`,
    `a = 'unclosed`,
    '',
  ]) {
    assert.equal(
      code(() => parseWhere(bad)),
      'expression',
      bad,
    );
  }
});

test('x-ms-if-tags: <>, OR, parentheses; a missing tag satisfies no comparison', () => {
  const tags = tagMap([
    ['stage', 'done'],
    ['n', '5'],
  ]);
  const holds = (text: string) => matches(parseTagCondition(text), tags);
  assert.equal(holds(`stage = 'done'`), true);
  assert.equal(holds(`stage <> 'done'`), false);
  assert.equal(holds(`"n" > '4' AND "n" <= '5'`), true);
  assert.equal(holds(`stage = 'x' OR n = '5'`), true);
  assert.equal(holds(`stage = 'x' AND (n = '5' OR n = '6')`), false);
  assert.equal(holds(`missing <> 'x'`), false);
  assert.equal(holds(`n > '10'`), true, 'values compare as strings');
  assert.equal(
    code(() => parseTagCondition(`@container = 'c'`)),
    'expression',
  );
  assert.equal(
    code(() => parseTagCondition(`(a = 'b'`)),
    'expression',
  );
});
