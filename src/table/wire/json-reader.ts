// A strict JSON reader (RFC 8259) that keeps what JSON.parse hides: a member name repeated in one
// object is rejected (Azure REST: understanding-the-table-service-data-model DuplicatePropertiesSpecified), and number
// literals keep
// their source text, so `2` (Int32) and `2.0` (Double) stay apart and big integers stay exact.
// One cursor over the already-decoded text; every failure is a StorageError carrying the offset
// (in UTF-16 code units) where reading stopped.
import { StorageError } from '../../errors.js';
import { jsonDepthMax } from '../../limits.js';

export type JsonMember = readonly [name: string, value: JsonValue];

export type JsonValue =
  | { readonly kind: 'object'; readonly members: readonly JsonMember[] }
  | { readonly kind: 'array'; readonly items: readonly JsonValue[] }
  | { readonly kind: 'string'; readonly value: string }
  /** `text` is the literal exactly as written, e.g. `-12`, `2.0`, `1.5E+24`. */
  | { readonly kind: 'number'; readonly text: string }
  | { readonly kind: 'boolean'; readonly value: boolean }
  | { readonly kind: 'null' };

const jsonTrue: JsonValue = { kind: 'boolean', value: true };
const jsonFalse: JsonValue = { kind: 'boolean', value: false };
const jsonNull: JsonValue = { kind: 'null' };

/** Parses one complete JSON text. A leading byte-order mark is skipped (RFC 8259 §8.1 allows it). */
export function readJson(text: string): JsonValue {
  const reader = new JsonReader(text);
  if (text.charCodeAt(0) === 0xfeff) reader.pos = 1;
  const value = reader.value(1);
  reader.skipWhitespace();
  if (reader.pos !== text.length) reader.fail('unexpected text after the JSON value');
  return value;
}

class JsonReader {
  pos = 0;

  constructor(private readonly text: string) {}

  fail(what: string): never {
    throw new StorageError('InvalidInput', `Invalid JSON at offset ${this.pos}: ${what}.`);
  }

  private unexpected(): never {
    const c = this.text.charAt(this.pos);
    return this.fail(c === '' ? 'unexpected end of input' : `unexpected character ${JSON.stringify(c)}`);
  }

  skipWhitespace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
    this.pos = pos;
  }

  value(depth: number): JsonValue {
    this.skipWhitespace();
    const c = this.text.charCodeAt(this.pos);
    switch (c) {
      case 0x7b /* { */:
        return this.object(depth);
      case 0x5b /* [ */:
        return this.array(depth);
      case 0x22 /* " */:
        return { kind: 'string', value: this.string() };
      case 0x74 /* t */:
        return this.literal('true', jsonTrue);
      case 0x66 /* f */:
        return this.literal('false', jsonFalse);
      case 0x6e /* n */:
        return this.literal('null', jsonNull);
      default:
        if (c === 0x2d /* - */ || isDigit(c)) return { kind: 'number', text: this.number() };
        return this.unexpected();
    }
  }

  private enter(depth: number): void {
    if (depth > jsonDepthMax) this.fail(`nesting deeper than ${jsonDepthMax}`);
    this.pos++; // the opening bracket
    this.skipWhitespace();
  }

  private object(depth: number): JsonValue {
    this.enter(depth);
    const members: JsonMember[] = [];
    if (this.text.charCodeAt(this.pos) === 0x7d /* } */) {
      this.pos++;
      return { kind: 'object', members };
    }
    const names = new Set<string>();
    for (;;) {
      if (this.text.charCodeAt(this.pos) !== 0x22) this.unexpected();
      const nameOffset = this.pos;
      const name = this.string();
      if (names.has(name)) {
        throw new StorageError(
          'DuplicatePropertiesSpecified',
          `A property is specified more than one time (member name at offset ${nameOffset}).`,
        );
      }
      names.add(name);
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== 0x3a /* : */) this.fail("expected ':'");
      this.pos++;
      members.push([name, this.value(depth + 1)]);
      if (this.endOfList(0x7d /* } */)) return { kind: 'object', members };
      this.skipWhitespace();
    }
  }

  private array(depth: number): JsonValue {
    this.enter(depth);
    const items: JsonValue[] = [];
    if (this.text.charCodeAt(this.pos) === 0x5d /* ] */) {
      this.pos++;
      return { kind: 'array', items };
    }
    for (;;) {
      items.push(this.value(depth + 1));
      if (this.endOfList(0x5d /* ] */)) return { kind: 'array', items };
    }
  }

  /** After a list element: consumes `,` (false) or the closing bracket (true). */
  private endOfList(close: number): boolean {
    this.skipWhitespace();
    const c = this.text.charCodeAt(this.pos);
    this.pos++;
    if (c === close) return true;
    if (c === 0x2c /* , */) return false;
    this.pos--;
    return this.fail(`expected ',' or '${String.fromCharCode(close)}'`);
  }

  private literal(word: string, value: JsonValue): JsonValue {
    if (!this.text.startsWith(word, this.pos)) this.unexpected();
    this.pos += word.length;
    return value;
  }

  /** Reads a string literal starting at its opening quote. Unescaped runs are sliced, not copied per character. */
  private string(): string {
    const text = this.text;
    let pos = this.pos + 1;
    let runStart = pos;
    let out = '';
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 0x22 /* " */) {
        this.pos = pos + 1;
        return out + text.slice(runStart, pos);
      }
      if (c === 0x5c /* \ */) {
        out += text.slice(runStart, pos);
        this.pos = pos;
        out += this.escape();
        pos = this.pos;
        runStart = pos;
        continue;
      }
      if (c < 0x20 || Number.isNaN(c)) {
        this.pos = pos;
        this.fail(Number.isNaN(c) ? 'unterminated string' : 'control character in a string');
      }
      pos++;
    }
  }

  /** Decodes one escape sequence at `pos` (the backslash) and moves past it. */
  private escape(): string {
    const start = this.pos;
    const c = this.text.charCodeAt(start + 1);
    this.pos += 2;
    switch (c) {
      case 0x22:
        return '"';
      case 0x5c:
        return '\\';
      case 0x2f:
        return '/';
      case 0x62:
        return '\b';
      case 0x66:
        return '\f';
      case 0x6e:
        return '\n';
      case 0x72:
        return '\r';
      case 0x74:
        return '\t';
      case 0x75 /* u */: {
        let code = 0;
        for (let i = 0; i < 4; i++) {
          const digit = hexDigitValue(this.text.charCodeAt(this.pos + i));
          if (digit < 0) this.failAt(start, 'invalid \\u escape');
          code = code * 16 + digit;
        }
        this.pos += 4;
        return String.fromCharCode(code);
      }
      default:
        return this.failAt(start, 'invalid escape sequence');
    }
  }

  /** Reads a number literal (RFC 8259 §6 grammar) and returns its text. */
  private number(): string {
    const text = this.text;
    const start = this.pos;
    let pos = start;
    if (text.charCodeAt(pos) === 0x2d /* - */) pos++;
    if (text.charCodeAt(pos) === 0x30 /* 0 */) pos++;
    else if (isDigit(text.charCodeAt(pos))) pos = skipDigits(text, pos);
    else this.failAt(pos, 'expected a digit');
    if (text.charCodeAt(pos) === 0x2e /* . */) {
      if (!isDigit(text.charCodeAt(pos + 1))) this.failAt(pos + 1, 'expected a digit');
      pos = skipDigits(text, pos + 1);
    }
    const e = text.charCodeAt(pos);
    if (e === 0x65 || e === 0x45 /* e E */) {
      pos++;
      const sign = text.charCodeAt(pos);
      if (sign === 0x2b || sign === 0x2d) pos++;
      if (!isDigit(text.charCodeAt(pos))) this.failAt(pos, 'expected a digit');
      pos = skipDigits(text, pos);
    }
    this.pos = pos;
    return text.slice(start, pos);
  }

  private failAt(pos: number, what: string): never {
    this.pos = pos;
    return this.fail(what);
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function skipDigits(text: string, pos: number): number {
  while (isDigit(text.charCodeAt(pos))) pos++;
  return pos;
}

function hexDigitValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}
