// $filter lexer (Azure REST: querying-tables-and-entities). Hands out one token at a time with its UTF-16 offset, so
// the
// parser reports the first problem in reading order (a function call is NotImplemented even if
// its argument list would not lex). Literals come out typed: a token carries its EdmValue.
import { StorageError } from '../../errors.js';
import { int32Max, int32Min, int64Max, int64Min, parseDateTimeTicks, parseGuid } from '../../domain/edm.js';
import type { EdmValue } from '../../domain/edm.js';
import { comparisonOperators } from './ast.js';
import type { ComparisonOperator } from './ast.js';

export type Token =
  | { readonly kind: 'open' | 'close' | 'end' | 'and' | 'or' | 'not'; readonly offset: number }
  | { readonly kind: 'name'; readonly offset: number; readonly name: string }
  | { readonly kind: 'operator'; readonly offset: number; readonly operator: ComparisonOperator }
  | { readonly kind: 'literal'; readonly offset: number; readonly literal: EdmValue };

/** A malformed filter: 400 InvalidInput saying where (Azure REST: querying-tables-and-entities, code unverified). */
export function invalidFilter(offset: number, problem: string): StorageError {
  return new StorageError('InvalidInput', `${problem} at offset ${offset} of $filter.`);
}

const excerptLengthMax = 64;

/** Filter text quoted in an error message, cut short so a hostile filter cannot balloon the answer. */
export function excerpt(text: string): string {
  return text.length > excerptLengthMax ? `${text.slice(0, excerptLengthMax)}…` : text;
}

const logicalKeywords: ReadonlySet<string> = new Set(['and', 'or', 'not']);
const operatorKeywords: ReadonlySet<string> = new Set(comparisonOperators);

// Identifiers follow C# rules (Azure REST: understanding-the-table-service-data-model): a letter or '_', then letters,
// digits, marks.
const identifierPattern = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]*/uy;
const numberPattern = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[lLdD]?/y;
const integerText = /^-?\d+$/;
const hexPairs = /^(?:[0-9A-Fa-f]{2})*$/;

const quote = 0x27;
const openParen = 0x28;
const closeParen = 0x29;

/** The grammar asks for spaces only; tabs and line breaks are accepted as well (harmless leniency). */
function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

export class Lexer {
  private offset = 0;

  constructor(private readonly text: string) {}

  next(): Token {
    while (this.offset < this.text.length && isWhitespace(this.text.charCodeAt(this.offset))) this.offset++;
    const offset = this.offset;
    if (offset >= this.text.length) return { kind: 'end', offset };
    const code = this.text.charCodeAt(offset);
    if (code === openParen || code === closeParen) {
      this.offset++;
      return { kind: code === openParen ? 'open' : 'close', offset };
    }
    if (code === quote) {
      return this.delimited({ kind: 'literal', offset, literal: { type: 'Edm.String', value: this.readString() } });
    }
    numberPattern.lastIndex = offset;
    const number = numberPattern.exec(this.text);
    if (number !== null) {
      this.offset += number[0].length;
      return this.delimited({ kind: 'literal', offset, literal: numberLiteral(number[0], offset) });
    }
    identifierPattern.lastIndex = offset;
    const word = identifierPattern.exec(this.text);
    if (word !== null) {
      this.offset += word[0].length;
      return this.delimited(this.wordToken(word[0], offset));
    }
    throw invalidFilter(offset, `Unexpected character ${this.characterAt(offset)}`);
  }

  /** Words are keywords, prefixed literals (datetime'…'), or property names. All case-sensitive. */
  private wordToken(word: string, offset: number): Token {
    if (this.text.charCodeAt(this.offset) === quote) {
      return { kind: 'literal', offset, literal: prefixedLiteral(word, this.readString(), offset) };
    }
    if (logicalKeywords.has(word)) return { kind: word as 'and' | 'or' | 'not', offset };
    if (operatorKeywords.has(word)) return { kind: 'operator', offset, operator: word as ComparisonOperator };
    if (word === 'true' || word === 'false') {
      return { kind: 'literal', offset, literal: { type: 'Edm.Boolean', value: word === 'true' } };
    }
    if (word === 'null') throw invalidFilter(offset, 'A null literal is not allowed');
    return { kind: 'name', offset, name: word };
  }

  /** `'…'` with `''` standing for one quote; the cursor is on the opening quote. */
  private readString(): string {
    const start = this.offset;
    let value = '';
    let from = start + 1;
    for (;;) {
      const close = this.text.indexOf("'", from);
      if (close < 0) throw invalidFilter(start, 'Unterminated quoted literal');
      value += this.text.slice(from, close);
      if (this.text.charCodeAt(close + 1) !== quote) {
        this.offset = close + 1;
        return value;
      }
      value += "'";
      from = close + 2;
    }
  }

  /** A word or literal must be followed by whitespace, a parenthesis or the end (`rws` in the grammar). */
  private delimited(token: Token): Token {
    const code = this.text.charCodeAt(this.offset);
    if (this.offset < this.text.length && !isWhitespace(code) && code !== openParen && code !== closeParen) {
      const previous = quoteText(this.text.slice(token.offset, this.offset));
      throw invalidFilter(this.offset, `Unexpected character ${this.characterAt(this.offset)} after ${previous}`);
    }
    return token;
  }

  /** The whole code point at `offset`, quoted. */
  private characterAt(offset: number): string {
    return quoteText(String.fromCodePoint(this.text.codePointAt(offset)!));
  }
}

function quoteText(text: string): string {
  return `'${excerpt(text)}'`;
}

function unrecognized(type: string, text: string, offset: number): StorageError {
  // Wording of the real service's answer for an out-of-range Int32 (Azure REST: table-service-error-codes).
  return invalidFilter(offset, `Unrecognized '${type}' literal ${quoteText(text)}`);
}

/**
 * `5` Int32 (must fit), `5L` Int64, `1.5` / `1e5` / `2d` Double (must be finite). The `l`
 * suffix, a dot-less exponent and the `d` suffix are unverified forms, accepted (Azure REST:
 * querying-tables-and-entities).
 */
function numberLiteral(text: string, offset: number): EdmValue {
  const suffix = text[text.length - 1]!;
  const digits = /[lLdD]/.test(suffix) ? text.slice(0, -1) : text;
  if (suffix === 'L' || suffix === 'l') {
    const value = integerText.test(digits) ? BigInt(digits) : undefined;
    if (value === undefined || value < int64Min || value > int64Max) throw unrecognized('Edm.Int64', text, offset);
    return { type: 'Edm.Int64', value };
  }
  if (digits !== text || !integerText.test(digits)) {
    const value = Number(digits);
    if (!Number.isFinite(value)) throw unrecognized('Edm.Double', text, offset);
    return { type: 'Edm.Double', value };
  }
  const value = BigInt(digits);
  if (value < BigInt(int32Min) || value > BigInt(int32Max)) throw unrecognized('Edm.Int32', text, offset);
  return { type: 'Edm.Int32', value: Number(value) };
}

/** datetime'…', guid'…', X'…' / binary'…' (the binary prefix is unverified; hex in either case). */
function prefixedLiteral(prefix: string, body: string, offset: number): EdmValue {
  switch (prefix) {
    case 'datetime': {
      const value = parseDateTimeTicks(body);
      if (value === undefined) throw unrecognized('Edm.DateTime', `datetime'${body}'`, offset);
      return { type: 'Edm.DateTime', value };
    }
    case 'guid': {
      const value = parseGuid(body);
      if (value === undefined) throw unrecognized('Edm.Guid', `guid'${body}'`, offset);
      return { type: 'Edm.Guid', value };
    }
    case 'X':
    case 'binary':
      if (!hexPairs.test(body)) throw unrecognized('Edm.Binary', `${prefix}'${body}'`, offset);
      return { type: 'Edm.Binary', value: Buffer.from(body, 'hex') };
    default:
      throw invalidFilter(offset, `Unknown literal prefix ${quoteText(prefix)}`);
  }
}
