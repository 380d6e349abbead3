import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../src/errors.js';
import type { EdmValue } from '../../src/domain/edm.js';
import { printLiteral } from '../../src/table/query/ast.js';
import { Lexer } from '../../src/table/query/lexer.js';
import type { Token } from '../../src/table/query/lexer.js';

/** Every token of `text` in a compact printed form: `kind@offset` plus its payload. */
function tokens(text: string): string[] {
  const lexer = new Lexer(text);
  const printed: string[] = [];
  for (;;) {
    const token = lexer.next();
    printed.push(`${printToken(token)}@${token.offset}`);
    if (token.kind === 'end') return printed;
  }
}

function printToken(token: Token): string {
  switch (token.kind) {
    case 'name':
      return `name:${token.name}`;
    case 'operator':
      return `op:${token.operator}`;
    case 'literal':
      return `${token.literal.type}:${printLiteral(token.literal)}`;
    default:
      return token.kind;
  }
}

function onlyLiteral(text: string): EdmValue {
  const token = new Lexer(text).next();
  assert.equal(token.kind, 'literal', text);
  return (token as Extract<Token, { kind: 'literal' }>).literal;
}

function lexError(text: string): StorageError {
  try {
    tokens(text);
  } catch (error) {
    assert.ok(error instanceof StorageError, `${text}: ${String(error)}`);
    return error;
  }
  assert.fail(`expected a lexer error for ${text}`);
}

describe('lexer tokens and offsets', () => {
  test('a typical SDK filter', () => {
    assert.deepEqual(tokens("PartitionKey eq 'p''x' and n gt 5"), [
      'name:PartitionKey@0',
      'op:eq@13',
      "Edm.String:'p''x'@16",
      'and@23',
      'name:n@27',
      'op:gt@29',
      'Edm.Int32:5@32',
      'end@33',
    ]);
  });

  test('parentheses need no surrounding spaces; not( is two tokens', () => {
    assert.deepEqual(tokens('not(a eq 1)or(b lt 2L)'), [
      'not@0',
      'open@3',
      'name:a@4',
      'op:eq@6',
      'Edm.Int32:1@9',
      'close@10',
      'or@11',
      'open@13',
      'name:b@14',
      'op:lt@16',
      'Edm.Int64:2L@19',
      'close@21',
      'end@22',
    ]);
  });

  test('leading, trailing and repeated whitespace (spaces, tabs, line breaks)', () => {
    assert.deepEqual(tokens("  a\teq\r\n'x'  "), ['name:a@2', 'op:eq@4', "Edm.String:'x'@8", 'end@13']);
    assert.deepEqual(tokens(''), ['end@0']);
    assert.deepEqual(tokens('   '), ['end@3']);
  });

  test('keywords are case-sensitive: other spellings are names', () => {
    assert.deepEqual(tokens('AND Or NOT Eq TRUE False'), [
      'name:AND@0',
      'name:Or@4',
      'name:NOT@7',
      'name:Eq@11',
      'name:TRUE@14',
      'name:False@19',
      'end@24',
    ]);
  });

  test('every operator keyword', () => {
    assert.deepEqual(tokens('eq ne gt ge lt le'), [
      'op:eq@0',
      'op:ne@3',
      'op:gt@6',
      'op:ge@9',
      'op:lt@12',
      'op:le@15',
      'end@17',
    ]);
  });

  test('property names: underscores, digits after the first character, non-ASCII letters', () => {
    assert.deepEqual(tokens('_a1 Straße 名前 a_B_9'), [
      'name:_a1@0',
      'name:Straße@4',
      'name:名前@11',
      'name:a_B_9@14',
      'end@19',
    ]);
  });
});

describe('literal forms (Azure REST: querying-tables-and-entities)', () => {
  const cases: Array<[string, EdmValue]> = [
    ["'it''s'", { type: 'Edm.String', value: "it's" }],
    ["''", { type: 'Edm.String', value: '' }],
    ["''''", { type: 'Edm.String', value: "'" }],
    ["'a b  c'", { type: 'Edm.String', value: 'a b  c' }],
    ["'and or not eq ( )'", { type: 'Edm.String', value: 'and or not eq ( )' }],
    ["'😀é\u00a0'", { type: 'Edm.String', value: '😀é\u00a0' }],
    ['5', { type: 'Edm.Int32', value: 5 }],
    ['0', { type: 'Edm.Int32', value: 0 }],
    ['-0', { type: 'Edm.Int32', value: 0 }],
    ['007', { type: 'Edm.Int32', value: 7 }],
    ['2147483647', { type: 'Edm.Int32', value: 2147483647 }],
    ['-2147483648', { type: 'Edm.Int32', value: -2147483648 }],
    ['5L', { type: 'Edm.Int64', value: 5n }],
    ['5l', { type: 'Edm.Int64', value: 5n }],
    ['-12L', { type: 'Edm.Int64', value: -12n }],
    ['2147483648L', { type: 'Edm.Int64', value: 2147483648n }],
    ['9223372036854775807L', { type: 'Edm.Int64', value: 9223372036854775807n }],
    ['-9223372036854775808L', { type: 'Edm.Int64', value: -9223372036854775808n }],
    ['9007199254740993L', { type: 'Edm.Int64', value: 9007199254740993n }],
    ['1.5', { type: 'Edm.Double', value: 1.5 }],
    ['2.0', { type: 'Edm.Double', value: 2 }],
    ['-3.25', { type: 'Edm.Double', value: -3.25 }],
    ['1e+21', { type: 'Edm.Double', value: 1e21 }],
    ['1E+24', { type: 'Edm.Double', value: 1e24 }],
    ['1e-05', { type: 'Edm.Double', value: 1e-5 }],
    ['1.23456789012346E+24', { type: 'Edm.Double', value: 1.23456789012346e24 }],
    ['2.5e3', { type: 'Edm.Double', value: 2500 }],
    ['7d', { type: 'Edm.Double', value: 7 }],
    ['7.5D', { type: 'Edm.Double', value: 7.5 }],
    ['true', { type: 'Edm.Boolean', value: true }],
    ['false', { type: 'Edm.Boolean', value: false }],
    ["datetime'2019-07-10T19:00:00.000Z'", { type: 'Edm.DateTime', value: 15627852000000000n }],
    ["datetime'2020-01-02T03:04:05Z'", { type: 'Edm.DateTime', value: 15779342450000000n }],
    ["datetime'2020-01-02T03:04:05.678901Z'", { type: 'Edm.DateTime', value: 15779342456789010n }],
    ["datetime'2020-01-02T03:04:05.6789012Z'", { type: 'Edm.DateTime', value: 15779342456789012n }],
    ["datetime'1601-01-01T00:00:00Z'", { type: 'Edm.DateTime', value: -116444736000000000n }],
    ["guid'12345678-1234-5678-1234-567812345678'", { type: 'Edm.Guid', value: '12345678-1234-5678-1234-567812345678' }],
    ["guid'ABCDEF01-ABCD-ABCD-ABCD-ABCDEF012345'", { type: 'Edm.Guid', value: 'abcdef01-abcd-abcd-abcd-abcdef012345' }],
    ["X'0102'", { type: 'Edm.Binary', value: Buffer.from([1, 2]) }],
    ["X'0A0b'", { type: 'Edm.Binary', value: Buffer.from([10, 11]) }],
    ["X''", { type: 'Edm.Binary', value: Buffer.alloc(0) }],
    ["binary'ff00'", { type: 'Edm.Binary', value: Buffer.from([255, 0]) }],
  ];

  for (const [text, expected] of cases) {
    test(text, () => {
      assert.deepEqual(onlyLiteral(text), expected);
      assert.deepEqual(tokens(text).at(-1), `end@${text.length}`);
    });
  }
});

describe('lexer errors: 400 InvalidInput with the offset', () => {
  const cases: Array<[string, RegExp]> = [
    ["a eq 'abc", /^Unterminated quoted literal at offset 5 of \$filter\.$/],
    ["a eq 'abc''", /Unterminated quoted literal at offset 5/],
    ["a eq datetime'2020-01-01", /Unterminated quoted literal at offset 13/],
    ['a eq 2147483648', /^Unrecognized 'Edm\.Int32' literal '2147483648' at offset 5/],
    ['a eq -2147483649', /Unrecognized 'Edm\.Int32' literal '-2147483649'/],
    ['a eq 1498179600055', /Unrecognized 'Edm\.Int32' literal '1498179600055'/],
    ['a eq 9223372036854775808L', /Unrecognized 'Edm\.Int64' literal '9223372036854775808L'/],
    ['a eq 1.5L', /Unrecognized 'Edm\.Int64' literal '1\.5L'/],
    ['a eq 1e400', /Unrecognized 'Edm\.Double' literal '1e400'/],
    ['a eq -1e400d', /Unrecognized 'Edm\.Double' literal '-1e400d'/],
    ["a eq datetime'2020-13-01T00:00:00Z'", /Unrecognized 'Edm\.DateTime' literal/],
    ["a eq datetime'2020-02-30T00:00:00Z'", /Unrecognized 'Edm\.DateTime' literal/],
    ["a eq datetime'1600-12-31T23:59:59Z'", /Unrecognized 'Edm\.DateTime' literal/],
    ["a eq datetime'yesterday'", /Unrecognized 'Edm\.DateTime' literal 'datetime'yesterday''/],
    ["a eq datetime''", /Unrecognized 'Edm\.DateTime'/],
    ["a eq guid'1234'", /Unrecognized 'Edm\.Guid' literal/],
    ["a eq guid'12345678123456781234567812345678'", /Unrecognized 'Edm\.Guid'/],
    ["a eq guid'g2345678-1234-5678-1234-567812345678'", /Unrecognized 'Edm\.Guid'/],
    ["a eq X'010'", /Unrecognized 'Edm\.Binary' literal 'X'010''/],
    ["a eq X'zz'", /Unrecognized 'Edm\.Binary'/],
    ["a eq binary'0g'", /Unrecognized 'Edm\.Binary'/],
    ["a eq x'01'", /Unknown literal prefix 'x' at offset 5/],
    ["a eq Guid'12345678-1234-5678-1234-567812345678'", /Unknown literal prefix 'Guid'/],
    ["a eq DateTime'2020-01-01T00:00:00Z'", /Unknown literal prefix 'DateTime'/],
    ["a eq datetimeoffset'2020-01-01T00:00:00Z'", /Unknown literal prefix 'datetimeoffset'/],
    ["a eq time'PT1H'", /Unknown literal prefix 'time'/],
    ['a eq null', /^A null literal is not allowed at offset 5/],
    ['null eq a', /A null literal is not allowed at offset 0/],
    ['a eq 5abc', /Unexpected character 'a' after '5' at offset 6/],
    ['a eq 5.', /Unexpected character '\.' after '5' at offset 6/],
    ['a eq .5', /Unexpected character '\.' at offset 5/],
    ['a eq 5m', /Unexpected character 'm' after '5'/],
    ['a eq 5f', /Unexpected character 'f' after '5'/],
    ['a eq 1e', /Unexpected character 'e' after '1'/],
    ['a eq +5', /Unexpected character '\+' at offset 5/],
    ['a eq -x', /Unexpected character '-' at offset 5/],
    ['a eq - 5', /Unexpected character '-' at offset 5/],
    ["a eq 'x'and b eq 1", /Unexpected character 'a' after ''x'' at offset 8/],
    ["a eq'x'", /Unknown literal prefix 'eq' at offset 2/],
    ['a eq 1,', /Unexpected character ',' after '1'/],
    ["a eq X'01'b", /Unexpected character 'b' after 'X'01''/],
    ['a# eq 1', /Unexpected character '#' after 'a' at offset 1/],
    ['a eq "x"', /Unexpected character '"' at offset 5/],
    ['$filter eq 1', /Unexpected character '\$' at offset 0/],
    ['a/b eq 1', /Unexpected character '\/' after 'a'/],
    ['a eq 1 && b eq 2', /Unexpected character '&' at offset 7/],
    ['a == 1', /Unexpected character '=' at offset 2/],
    ['\u0000', /Unexpected character/],
    ['\ud800', /Unexpected character/],
    ['1abc', /Unexpected character 'a' after '1'/],
  ];

  for (const [text, message] of cases) {
    test(JSON.stringify(text), () => {
      const error = lexError(text);
      assert.equal(error.code, 'InvalidInput');
      assert.equal(error.status, 400);
      assert.match(error.message, message);
    });
  }
});

test('messages quote at most 64 characters of the filter', () => {
  for (const text of [
    `a eq ${'9'.repeat(1000)}`,
    `a eq ${'9'.repeat(1000)}L`,
    `a eq guid'${'0'.repeat(1000)}'`,
    `${'a'.repeat(1000)}#`,
  ]) {
    const error = lexError(text);
    assert.ok(error.message.length < 160, error.message);
    assert.match(error.message, /9{64}…'|0{58}…'|a{64}…'/);
  }
});

test('tokens are produced lazily: nothing past the current token is read', () => {
  const lexer = new Lexer("startswith(Name, 'a') #");
  assert.equal(printToken(lexer.next()), 'name:startswith');
  assert.equal(printToken(lexer.next()), 'open');
  assert.throws(() => lexer.next(), /Unexpected character ',' after 'Name'/);
});
