// Key codecs: values -> key text whose ordinal (UTF-16 code unit) order is the order of the values,
// and back. Keys sort as plain strings on the service (Azure REST: understanding-the-table-service-data-model), so `10`
// sorts before `9`
// unless numbers are padded, and some characters may not appear in a key at all.

/** Separates the components of a compound key. The lowest character a key may hold, so a shorter
 * tuple sorts before every longer tuple that extends it, as tuples do. */
export const componentSeparator = ' ';

/** A reversible, order-preserving mapping between values of T and key text. */
export interface KeyCodec<T> {
  readonly name: string;
  encode(value: T): string;
  decode(text: string): T;
  /** The order of values that the encoded text preserves. */
  compare(a: T, b: T): number;
}

export class KeyEncodingError extends Error {
  override name = 'KeyEncodingError';
}

// ---- text: order-preserving escaping ----------------------------------------------------------
//
// Characters a key may not hold (`/ \ # ?`, U+0000–U+001F, U+007F–U+009F) and the separator (space)
// become two characters: a lead character that is the nearest allowed character below them, then an
// index letter. The lead characters themselves are escaped the same way, so every escape is
// unambiguous, and because each lead sits exactly where its group sits in code-unit order, the
// escaped text sorts as the original did. Every escape starts above the separator.
const indexLetters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** lead character -> the ordered characters it stands for (the lead itself is the last one). */
const escapeGroups: ReadonlyArray<readonly [lead: string, members: string]> = [
  ['!', range(0x00, 0x21)], // controls, space, and `!` itself
  ['"', '"#'],
  ['.', './'],
  ['>', '>?'],
  ['[', '[\\'],
  ['~', range(0x7e, 0x9f)], // `~`, DEL and the C1 controls
];

function range(from: number, to: number): string {
  let text = '';
  for (let code = from; code <= to; code++) text += String.fromCharCode(code);
  return text;
}

const escapeOf = new Map<string, string>();
const unescapeOf = new Map<string, string>();
for (const [lead, members] of escapeGroups) {
  if (members.length > indexLetters.length) throw new Error('escape group too large');
  [...members].forEach((char, index) => {
    const escaped = lead + indexLetters[index];
    escapeOf.set(char, escaped);
    unescapeOf.set(escaped, char);
  });
}
const leads = new Set(escapeGroups.map(([lead]) => lead));

function escapeText(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const char = value[i]!;
    const code = char.charCodeAt(0);
    if (code >= 0xd800 && code <= 0xdfff) {
      // Surrogates pass through as pairs; a lone one cannot travel as UTF-8.
      const next = value.charCodeAt(i + 1);
      if (code > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) {
        throw new KeyEncodingError(`key text has a lone surrogate at index ${i}`);
      }
      out += char + value[i + 1];
      i++;
      continue;
    }
    out += escapeOf.get(char) ?? char;
  }
  return out;
}

function unescapeText(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (!leads.has(char)) {
      out += char;
      continue;
    }
    const original = unescapeOf.get(text.slice(i, i + 2));
    if (original === undefined)
      throw new KeyEncodingError(`bad escape ${JSON.stringify(text.slice(i, i + 2))} in key text`);
    out += original;
    i++;
  }
  return out;
}

/** Ordinal order of strings by UTF-16 code units, the service's key order. */
export function compareOrdinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareNumbers(a: number | bigint, b: number | bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function assertInteger(value: number, min: number, max: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new KeyEncodingError(`${what}: ${value} is not an integer in [${min}, ${max}]`);
  }
}

function parseDigits(text: string, width: number, what: string): bigint {
  if (text.length !== width || !/^[0-9]+$/.test(text))
    throw new KeyEncodingError(`${what}: bad key text ${JSON.stringify(text)}`);
  return BigInt(text);
}

const pad = (value: bigint, width: number) => value.toString().padStart(width, '0');

/** .NET ticks (100 ns since 0001-01-01) of the Unix epoch, and of DateTime.MaxValue. */
const epochTicks = 621_355_968_000_000_000n;
const maxTicks = 3_155_378_975_999_999_999n;
const ticksPerMs = 10_000n;

function ticksOf(date: Date): bigint {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) throw new KeyEncodingError('ticks: invalid Date');
  const ticks = BigInt(ms) * ticksPerMs + epochTicks;
  if (ticks < 0n || ticks > maxTicks) throw new KeyEncodingError(`ticks: ${date.toISOString()} is outside 0001..9999`);
  return ticks;
}

function dateOfTicks(ticks: bigint): Date {
  return new Date(Number((ticks - epochTicks) / ticksPerMs));
}

const int64Offset = 1n << 63n;
const int64Width = 20; // 2^64 - 1 has 20 digits

/** The codecs. Every one is reversible and order-preserving over its whole domain. */
export const codecs = {
  /** Any string; characters keys may not hold are escaped, order preserved. */
  text(): KeyCodec<string> {
    return { name: 'text', encode: escapeText, decode: unescapeText, compare: compareOrdinal };
  },
  /** Non-negative safe integer, zero-padded to `digits`. */
  uint(digits: number): KeyCodec<number> {
    const max = 10 ** digits - 1;
    if (digits < 1 || digits > 15) throw new RangeError('uint digits must be 1..15');
    return {
      name: `uint(${digits})`,
      encode: (value) => (assertInteger(value, 0, max, 'uint'), pad(BigInt(value), digits)),
      decode: (text) => Number(parseDigits(text, digits, 'uint')),
      compare: compareNumbers,
    };
  },
  /** Non-negative integer, zero-padded and inverted: the largest value sorts first. */
  invertedUint(digits: number): KeyCodec<number> {
    const max = 10 ** digits - 1;
    if (digits < 1 || digits > 15) throw new RangeError('invertedUint digits must be 1..15');
    return {
      name: `invertedUint(${digits})`,
      encode: (value) => (assertInteger(value, 0, max, 'invertedUint'), pad(BigInt(max - value), digits)),
      decode: (text) => max - Number(parseDigits(text, digits, 'invertedUint')),
      compare: (a, b) => compareNumbers(b, a),
    };
  },
  /** Signed safe integer with |value| < 10^digits, as value + (10^digits - 1) over digits + 1 places. */
  int(digits: number): KeyCodec<number> {
    if (digits < 1 || digits > 15) throw new RangeError('int digits must be 1..15');
    const bound = 10 ** digits - 1;
    return {
      name: `int(${digits})`,
      encode: (value) => (assertInteger(value, -bound, bound, 'int'), pad(BigInt(value + bound), digits + 1)),
      decode: (text) => Number(parseDigits(text, digits + 1, 'int')) - bound,
      compare: compareNumbers,
    };
  },
  /** Any Int64 (bigint), offset by 2^63 and padded to 20 digits. */
  int64(): KeyCodec<bigint> {
    return {
      name: 'int64',
      encode: (value) => {
        if (BigInt.asIntN(64, value) !== value) throw new KeyEncodingError(`int64: ${value} is outside Int64`);
        return pad(value + int64Offset, int64Width);
      },
      decode: (text) => parseDigits(text, int64Width, 'int64') - int64Offset,
      compare: compareNumbers,
    };
  },
  /** Any Int64, inverted: the largest sorts first. */
  invertedInt64(): KeyCodec<bigint> {
    const top = (1n << 64n) - 1n;
    return {
      name: 'invertedInt64',
      encode: (value) => {
        if (BigInt.asIntN(64, value) !== value) throw new KeyEncodingError(`invertedInt64: ${value} is outside Int64`);
        return pad(top - (value + int64Offset), int64Width);
      },
      decode: (text) => top - parseDigits(text, int64Width, 'invertedInt64') - int64Offset,
      compare: (a, b) => compareNumbers(b, a),
    };
  },
  /** A Date as 19-digit .NET ticks (millisecond precision), oldest first. */
  ticks(): KeyCodec<Date> {
    return {
      name: 'ticks',
      encode: (date) => pad(ticksOf(date), 19),
      decode: (text) => dateOfTicks(parseDigits(text, 19, 'ticks')),
      compare: (a, b) => compareNumbers(a.getTime(), b.getTime()),
    };
  },
  /** A Date as DateTime.MaxValue.Ticks - ticks, 19 digits: newest first (the log tail pattern). */
  invertedTicks(): KeyCodec<Date> {
    return {
      name: 'invertedTicks',
      encode: (date) => pad(maxTicks - ticksOf(date), 19),
      decode: (text) => dateOfTicks(maxTicks - parseDigits(text, 19, 'invertedTicks')),
      compare: (a, b) => compareNumbers(b.getTime(), a.getTime()),
    };
  },
  /** The UTC day of a Date as YYYYMMDD (time of day dropped; decode gives midnight UTC). */
  day(): KeyCodec<Date> {
    return {
      name: 'day',
      encode: (date) => {
        const year = date.getUTCFullYear();
        if (!(year >= 1 && year <= 9999)) throw new KeyEncodingError(`day: year ${year} outside 1..9999`);
        return date.toISOString().slice(0, 10).replaceAll('-', '');
      },
      decode: (text) => {
        if (!/^[0-9]{8}$/.test(text)) throw new KeyEncodingError(`day: bad key text ${JSON.stringify(text)}`);
        return new Date(`${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6, 8)}T00:00:00Z`);
      },
      compare: (a, b) => compareNumbers(Math.floor(a.getTime() / 86_400_000), Math.floor(b.getTime() / 86_400_000)),
    };
  },
  /** A finite or infinite double (not NaN) as 16 hex digits of its sign-flipped IEEE bits. */
  double(): KeyCodec<number> {
    const view = new DataView(new ArrayBuffer(8));
    const signBit = 1n << 63n;
    const all = (1n << 64n) - 1n;
    return {
      name: 'double',
      encode: (value) => {
        if (Number.isNaN(value)) throw new KeyEncodingError('double: NaN has no order');
        view.setFloat64(0, value === 0 ? 0 : value); // -0 and 0 are one value
        const bits = view.getBigUint64(0);
        const ordered = bits & signBit ? all ^ bits : bits | signBit;
        return ordered.toString(16).padStart(16, '0');
      },
      decode: (text) => {
        if (!/^[0-9a-f]{16}$/.test(text)) throw new KeyEncodingError(`double: bad key text ${JSON.stringify(text)}`);
        const ordered = BigInt('0x' + text);
        view.setBigUint64(0, ordered & signBit ? ordered ^ signBit : all ^ ordered);
        return view.getFloat64(0);
      },
      compare: compareNumbers,
    };
  },
  /** A GUID in canonical lower-case form. */
  guid(): KeyCodec<string> {
    const pattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const check = (value: string) => {
      const lower = value.toLowerCase();
      if (!pattern.test(lower)) throw new KeyEncodingError(`guid: ${JSON.stringify(value)} is not a GUID`);
      return lower;
    };
    return {
      name: 'guid',
      encode: check,
      decode: check,
      compare: (a, b) => compareOrdinal(a.toLowerCase(), b.toLowerCase()),
    };
  },
  /** false < true as 0 < 1. */
  boolean(): KeyCodec<boolean> {
    return {
      name: 'boolean',
      encode: (value) => (value ? '1' : '0'),
      decode: (text) => {
        if (text !== '0' && text !== '1') throw new KeyEncodingError(`boolean: bad key text ${JSON.stringify(text)}`);
        return text === '1';
      },
      compare: (a, b) => Number(a) - Number(b),
    };
  },
};

/** Joins encoded components; a tuple sorts before the longer tuples that extend it. */
export function joinComponents(encoded: readonly string[]): string {
  return encoded.join(componentSeparator);
}

export function splitComponents(key: string): string[] {
  return key.split(componentSeparator);
}

/**
 * The key range of every key equal to these complete components or extending them with more:
 * `ge` ≤ key < `lt`. Extensions start with the separator, the lowest character, so the next
 * character after it bounds them.
 */
export function prefixRange(encodedComponents: readonly string[]): { ge: string; lt: string } {
  const prefix = joinComponents(encodedComponents);
  return { ge: prefix, lt: prefix + String.fromCharCode(componentSeparator.charCodeAt(0) + 1) };
}

/**
 * Characters the service refuses in PartitionKey and RowKey (Azure REST: understanding-the-table-service-data-model).
 */
export const forbiddenKeyCharacters = /[\/\\#?\u0000-\u001f\u007f-\u009f]/;
