import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MultipartSyntaxError,
  bodyParts,
  isValidBoundary,
  parseHeaderBlock,
  parseMediaType,
  readLine,
} from '../../../src/wire/multipart.js';

/** The parts of `text` as strings, in order. */
function partsOf(text: string, boundary = 'b'): string[] {
  const input = Buffer.from(text, 'latin1');
  return [...bodyParts(input, { start: 0, end: input.length }, boundary)].map((range) =>
    input.toString('latin1', range.start, range.end),
  );
}

function syntaxErrorOffset(run: () => unknown): number {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof MultipartSyntaxError, `expected MultipartSyntaxError, got ${String(error)}`);
    assert.equal(error.code, 'InvalidInput');
    assert.equal(error.status, 400);
    return error.offset;
  }
  assert.fail('expected a MultipartSyntaxError');
}

describe('bodyParts', () => {
  test('splits parts; the CRLF before a delimiter belongs to the delimiter', () => {
    assert.deepEqual(partsOf('--b\r\nfirst\r\n--b\r\nsecond\r\n\r\n--b--'), ['first', 'second\r\n']);
  });

  test('skips preamble, transport padding and epilogue (RFC 2046 §5.1.1)', () => {
    assert.deepEqual(partsOf('preamble\r\n--b \t\r\none\r\n--b\t\r\ntwo\r\n--b--  \r\nepilogue\r\n--b\r\nx'), [
      'one',
      'two',
    ]);
  });

  test('accepts bare LF line breaks', () => {
    assert.deepEqual(partsOf('--b\nfirst\n--b\nsecond\n--b--\n'), ['first', 'second']);
  });

  test('an empty part between adjacent delimiters', () => {
    assert.deepEqual(partsOf('--b\r\n\r\n--b--'), ['']);
  });

  test('the boundary inside a line is content, as is a longer word starting with it', () => {
    const text = '--b\r\n{"v":"x--b\r\n"}\r\n--bc\r\n--b-\r\n--b--';
    assert.deepEqual(partsOf(text), ['{"v":"x--b\r\n"}\r\n--bc\r\n--b-']);
  });

  test('only the first delimiter may lack a preceding line break', () => {
    assert.deepEqual(partsOf('x--b\r\n--b\r\npart\r\n--b--'), ['part']);
  });

  test('zero parts when the close delimiter comes first', () => {
    assert.deepEqual(partsOf('--b--'), []);
  });

  test('honours the range: delimiters past its end do not count', () => {
    const input = Buffer.from('--b\r\nin\r\n--b--|--b\r\nout\r\n--b--');
    const parts = [...bodyParts(input, { start: 0, end: 14 }, 'b')];
    assert.deepEqual(parts, [{ start: 5, end: 7 }]);
    assert.equal(
      syntaxErrorOffset(() => [...bodyParts(input, { start: 0, end: 13 }, 'b')]),
      13,
    );
  });

  test('missing first delimiter', () => {
    assert.equal(
      syntaxErrorOffset(() => partsOf('no delimiters here')),
      0,
    );
  });

  test('missing close delimiter, reported at the end of the range', () => {
    assert.equal(
      syntaxErrorOffset(() => partsOf('--b\r\npart\r\n--b\r\nlast')),
      20,
    );
  });

  test('a delimiter not followed by a line break or -- is not one', () => {
    assert.equal(
      syntaxErrorOffset(() => partsOf('--b\r\npart\r\n--b')),
      14,
    );
  });

  test('a multi-byte boundary found inside UTF-8 content stays content', () => {
    const text = Buffer.concat([Buffer.from('--b\r\n'), Buffer.from('é--b\r\n', 'utf8'), Buffer.from('\r\n--b--')]);
    const [part] = [...bodyParts(text, { start: 0, end: text.length }, 'b')];
    assert.equal(text.toString('utf8', part?.start, part?.end), 'é--b\r\n');
  });
});

describe('parseHeaderBlock', () => {
  const block = (text: string, bytesMax = 1024) => {
    const input = Buffer.from(text, 'latin1');
    return parseHeaderBlock(input, { start: 0, end: input.length }, bytesMax);
  };

  test('lower-cases names, trims values, finds the body', () => {
    const { headers, bodyStart } = block('Content-Type:  application/http \r\ncontent-ID:\t7\r\n\r\nbody');
    assert.deepEqual(
      [...headers],
      [
        ['content-type', 'application/http'],
        ['content-id', '7'],
      ],
    );
    assert.equal(bodyStart, 51);
  });

  test('joins repeated fields with ", " as node:http does', () => {
    assert.equal(
      block('X-HTTP-Method: MERGE\r\nx-http-method: PUT\r\n\r\n').headers.get('x-http-method'),
      'MERGE, PUT',
    );
  });

  test('an empty block, and a block that runs to the end of its range', () => {
    assert.equal(block('\r\nbody').bodyStart, 2);
    const unterminated = block('If-Match: *');
    assert.equal(unterminated.headers.get('if-match'), '*');
    assert.equal(unterminated.bodyStart, 11);
  });

  test('an empty value is allowed', () => {
    assert.equal(block('Prefer:\r\n\r\n').headers.get('prefer'), '');
  });

  test('rejects lines without a colon, non-token names, folding and control characters', () => {
    assert.equal(
      syntaxErrorOffset(() => block('Good: 1\r\ngarbage\r\n\r\n')),
      9,
    );
    assert.equal(
      syntaxErrorOffset(() => block('Bad Name: 1\r\n\r\n')),
      0,
    );
    assert.equal(
      syntaxErrorOffset(() => block(': 1\r\n\r\n')),
      0,
    );
    assert.equal(
      syntaxErrorOffset(() => block('A: 1\r\n folded\r\n\r\n')),
      6,
    );
    assert.equal(
      syntaxErrorOffset(() => block('A: x\u0000y\r\n\r\n')),
      4,
    );
    assert.equal(
      syntaxErrorOffset(() => block('A: x\ry\r\n\r\n')),
      4,
    );
  });

  test('caps the block size', () => {
    assert.equal(block(`A: ${'x'.repeat(90)}\r\n\r\n`, 100).headers.get('a')?.length, 90);
    assert.equal(
      syntaxErrorOffset(() => block(`A: 1\r\nB: ${'x'.repeat(100)}\r\n\r\n`, 100)),
      6,
    );
  });
});

describe('readLine', () => {
  test('CRLF, LF and end of range', () => {
    const input = Buffer.from('ab\r\ncd\nef');
    assert.deepEqual(readLine(input, 0, input.length), { text: { start: 0, end: 2 }, next: 4 });
    assert.deepEqual(readLine(input, 4, input.length), { text: { start: 4, end: 6 }, next: 7 });
    assert.deepEqual(readLine(input, 7, input.length), { text: { start: 7, end: 9 }, next: 9 });
    assert.deepEqual(readLine(input, 0, 3), { text: { start: 0, end: 3 }, next: 3 });
  });
});

describe('parseMediaType', () => {
  test('unquoted and quoted boundaries, case-insensitive names', () => {
    const plain = parseMediaType('multipart/mixed; boundary=batch_1a1071e5-d8cf-42b2-8fd2-a4fdf66e7d6d');
    assert.equal(plain?.essence, 'multipart/mixed');
    assert.equal(plain?.parameters.get('boundary'), 'batch_1a1071e5-d8cf-42b2-8fd2-a4fdf66e7d6d');
    const quoted = parseMediaType('Multipart/Mixed;BOUNDARY="a b;\\"c\\""; charset=utf-8;');
    assert.equal(quoted?.essence, 'multipart/mixed');
    assert.equal(quoted?.parameters.get('boundary'), 'a b;"c"');
    assert.equal(quoted?.parameters.get('charset'), 'utf-8');
  });

  test('parameters are optional', () => {
    assert.deepEqual(parseMediaType(' application/http '), { essence: 'application/http', parameters: new Map() });
  });

  test('malformed media types', () => {
    for (const text of [
      '',
      'multipart',
      '/mixed',
      'multipart/',
      'multi part/mixed',
      'multipart/mixed; boundary',
      'multipart/mixed; boundary=',
      'multipart/mixed; boundary="open',
      'multipart/mixed; boundary=a b',
      'multipart/mixed; boundary=a; boundary=b',
      'multipart/mixed; bad name=a',
    ]) {
      assert.equal(parseMediaType(text), undefined, text);
    }
  });
});

describe('isValidBoundary', () => {
  test('RFC 2046 bchars, 1 to 70 characters, no trailing space', () => {
    assert.ok(isValidBoundary('batch_1a1071e5-d8cf-42b2-8fd2-a4fdf66e7d6d'));
    assert.ok(isValidBoundary("a'()+_,-./:=? z"));
    assert.ok(isValidBoundary('x'.repeat(70)));
    assert.ok(!isValidBoundary(''));
    assert.ok(!isValidBoundary('x'.repeat(71)));
    assert.ok(!isValidBoundary('trailing '));
    assert.ok(!isValidBoundary('semi;colon'));
    assert.ok(!isValidBoundary('é'));
  });
});
