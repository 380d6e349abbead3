// EDM property types and their values (Azure REST: payload-format-for-table-service-operations). Pure: no I/O.
// Int64 is always a bigint, DateTime is 100 ns ticks since the Unix epoch in a bigint:
// neither ever passes through a JS number.
import { assertNever } from './assert.js';

export type EdmType =
  'Edm.String' | 'Edm.Int32' | 'Edm.Int64' | 'Edm.Double' | 'Edm.Boolean' | 'Edm.DateTime' | 'Edm.Guid' | 'Edm.Binary';

export type EdmValue =
  | { readonly type: 'Edm.String'; readonly value: string }
  | { readonly type: 'Edm.Int32'; readonly value: number }
  | { readonly type: 'Edm.Int64'; readonly value: bigint }
  | { readonly type: 'Edm.Double'; readonly value: number }
  | { readonly type: 'Edm.Boolean'; readonly value: boolean }
  /** 100 ns ticks since 1970-01-01T00:00:00Z (negative before it). */
  | { readonly type: 'Edm.DateTime'; readonly value: bigint }
  /** Lower-case hyphenated form, 36 characters. */
  | { readonly type: 'Edm.Guid'; readonly value: string }
  | { readonly type: 'Edm.Binary'; readonly value: Buffer };

export const edmTypes: readonly EdmType[] = [
  'Edm.String',
  'Edm.Int32',
  'Edm.Int64',
  'Edm.Double',
  'Edm.Boolean',
  'Edm.DateTime',
  'Edm.Guid',
  'Edm.Binary',
];

export function isEdmType(name: string): name is EdmType {
  return (edmTypes as readonly string[]).includes(name);
}

export const int32Min = -2147483648;
export const int32Max = 2147483647;
export const int64Min = -(2n ** 63n);
export const int64Max = 2n ** 63n - 1n;

// ---------------------------------------------------------------------------------------------
// DateTime: ticks <-> ISO 8601 text.

const ticksPerMs = 10_000n;
const ticksPerSecond = 10_000_000n;
/**
 * 1601-01-01T00:00:00Z, the earliest DateTime the service accepts (Azure REST:
 * payload-format-for-table-service-operations).
 */
export const dateTimeTicksMin = -116444736000000000n;
/** 9999-12-31T23:59:59.9999999Z, the latest. */
export const dateTimeTicksMax = 2534023007999999999n;

/** What an ISO 8601 time may leave out, by the field it comes from. */
export interface IsoTimeForm {
  /** A date alone (`2024-01-31`) stands for its midnight UTC (SAS times, stored access policies). */
  readonly dateOnly?: boolean;
  /** A time without `Z` or an offset is refused instead of read as UTC. */
  readonly zoneRequired?: boolean;
  /** More fractional digits are refused; without it, digits past the 7th (100 ns) are truncated. */
  readonly fractionDigitsMax?: number;
}

const isoTime = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * The one ISO 8601 reader: `yyyy-MM-dd[THH:mm[:ss[.f…]][Z|±hh:mm]]` in ticks (100 ns since the
 * Unix epoch), or undefined when the text is not such a time or names no real date and time.
 */
export function parseIsoTicks(text: string, form: IsoTimeForm = {}): bigint | undefined {
  const m = isoTime.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s = '00', frac = '', zone] = m;
  if (h === undefined ? !form.dateOnly : zone === undefined && form.zoneRequired) return undefined;
  if (form.fractionDigitsMax !== undefined && frac.length > form.fractionDigitsMax) return undefined;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h ?? 0);
  const minute = Number(mi ?? 0);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const check = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not.
  check.setUTCFullYear(year);
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  let ticks = BigInt(check.getTime()) * ticksPerMs;
  ticks += BigInt(hour * 3600 + minute * 60 + second) * ticksPerSecond;
  ticks += BigInt((frac + '0000000').slice(0, 7));
  if (zone !== undefined && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1n : 1n;
    const offsetMinutes = BigInt(Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
    ticks -= sign * offsetMinutes * 60n * ticksPerSecond;
  }
  return ticks;
}

/**
 * An entity DateTime: a date and time in range (1601 to 9999). A missing zone is UTC and more
 * than 7 fractional digits are truncated (Azure REST: payload-format-for-table-service-operations, both unverified,
 * following its
 * recommendation).
 */
export function parseDateTimeTicks(text: string): bigint | undefined {
  const ticks = parseIsoTicks(text);
  return ticks === undefined || ticks < dateTimeTicksMin || ticks > dateTimeTicksMax ? undefined : ticks;
}

// Entities written together share a Timestamp, so a scan formats the same ticks many times over.
let lastFormattedTicks: bigint | undefined;
let lastFormattedText = '';

/** Milliseconds since 1970 of a DateTime in ticks, rounded down (also before 1970). */
export function floorMilliseconds(ticks: bigint): bigint {
  const ms = ticks / ticksPerMs; // rounds toward zero
  return ms * ticksPerMs > ticks ? ms - 1n : ms;
}

/**
 * `yyyy-MM-ddTHH:mm:ss[.fffffff]Z`, trailing zeros of the fraction removed (Azure REST:
 * payload-format-for-table-service-operations).
 */
export function formatDateTimeTicks(ticks: bigint): string {
  if (ticks === lastFormattedTicks) return lastFormattedText;
  const ms = floorMilliseconds(ticks);
  const sub = ticks - ms * ticksPerMs; // 0..9999 sub-millisecond ticks
  const iso = new Date(Number(ms)).toISOString(); // 2022-02-01T20:52:39.317Z
  lastFormattedTicks = ticks;
  lastFormattedText = dateTimeText(iso.slice(0, 19), iso.slice(20, 23) + String(sub).padStart(4, '0'));
  return lastFormattedText;
}

// The common shape of a DateTime on the wire (what JavaScript's toISOString and .NET write).
const simpleDateTime = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?Z$/;
const daysInMonth = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** The year of dateTimeTicksMin. */
const dateTimeYearMin = 1601;

/**
 * formatDateTimeTicks(parseDateTimeTicks(text)), or undefined when that is undefined. A literal of
 * the common shape (UTC, 0-7 fractional digits) is checked and trimmed as text, without ticks.
 */
export function canonicalDateTimeText(text: string): string | undefined {
  const m = simpleDateTime.exec(text);
  if (m === null) {
    const ticks = parseDateTimeTicks(text);
    return ticks === undefined ? undefined : formatDateTimeTicks(ticks);
  }
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const monthDays = month === 2 && leap ? 29 : daysInMonth[month - 1];
  if (year < dateTimeYearMin || monthDays === undefined || day < 1 || day > monthDays) return undefined;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return undefined;
  return dateTimeText(text.slice(0, 19), m[7] ?? '');
}

/** `base` (yyyy-MM-ddTHH:mm:ss) with the fraction's digits, trailing zeros removed, and `Z`. */
function dateTimeText(base: string, fraction: string): string {
  let end = fraction.length;
  while (end > 0 && fraction.charCodeAt(end - 1) === 48 /* '0' */) end--;
  return end === 0 ? `${base}Z` : `${base}.${fraction.slice(0, end)}Z`;
}

// ---------------------------------------------------------------------------------------------
// Guid, Binary, Double.

const guidText = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Canonical lower-case Guid text, or undefined if `text` is not a hyphenated Guid. */
export function parseGuid(text: string): string | undefined {
  return guidText.test(text) ? text.toLowerCase() : undefined;
}

const base64Text = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Bytes of standard padded base64 text, or undefined if it is not such text. */
export function parseBase64(text: string): Buffer | undefined {
  return base64Text.test(text) ? Buffer.from(text, 'base64') : undefined;
}

const base64Alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * parseBase64(text)?.toString('base64') and the byte count, or undefined if it is not base64
 * text. Text whose padding bits are zero is already that form and is not decoded.
 */
export function canonicalBase64(text: string): { readonly text: string; readonly bytes: number } | undefined {
  if (!base64Text.test(text)) return undefined;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const bytes = (text.length / 4) * 3 - padding;
  // The last data character carries 4 (`==`) or 2 (`=`) bits past the bytes; they must be zero.
  const unusedBitsMask = padding === 2 ? 0b1111 : padding === 1 ? 0b11 : 0;
  const last = base64Alphabet.indexOf(text.charAt(text.length - 1 - padding));
  if ((last & unusedBitsMask) === 0) return { text, bytes };
  return { text: Buffer.from(text, 'base64').toString('base64'), bytes };
}

/**
 * Parses the Double spellings clients send as strings: numbers, NaN, Infinity, -Infinity
 * (docs/protocol-notes.md#annotated-values-as-strings).
 */
export function parseDoubleText(text: string): number | undefined {
  if (text === 'NaN') return NaN;
  if (text === 'Infinity' || text === 'INF') return Infinity;
  if (text === '-Infinity' || text === '-INF') return -Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * Lossless text of a finite double: JSON number syntax, integral values keep a `.0` (Azure REST:
 * payload-format-for-table-service-operations).
 */
export function formatFiniteDouble(value: number): string {
  if (Object.is(value, -0)) return '-0.0'; // JSON.stringify drops the sign of -0
  const text = JSON.stringify(value); // shortest round-trip form, e.g. 1.5e+24, 3.14, 2
  return /[.eE]/.test(text) ? text : `${text}.0`;
}

/** Parses a decimal Int64 text exactly, or undefined if out of range or malformed. */
export function parseInt64Text(text: string): bigint | undefined {
  if (!/^[+-]?\d{1,20}$/.test(text)) return undefined;
  const value = BigInt(text);
  return value < int64Min || value > int64Max ? undefined : value;
}

/** Parses a decimal Int32 text exactly, or undefined if out of range or malformed. */
export function parseInt32Text(text: string): number | undefined {
  if (!/^[+-]?\d{1,11}$/.test(text)) return undefined;
  const value = Number(text);
  return value < int32Min || value > int32Max ? undefined : value;
}

/**
 * A value in its JSON form, the same on the wire and in the stored JSON: Int64 as a string of
 * digits, Double as a number with a point or exponent (NaN and ±Infinity as strings), DateTime as
 * ISO text, Binary as base64. Whether a type annotation goes with it is the caller's rule.
 */
export function edmValueJson(value: EdmValue): string {
  switch (value.type) {
    case 'Edm.String':
    case 'Edm.Guid':
      return JSON.stringify(value.value);
    case 'Edm.Int32':
    case 'Edm.Boolean':
      return String(value.value);
    case 'Edm.Int64':
      return `"${value.value}"`;
    case 'Edm.Double':
      return Number.isFinite(value.value) ? formatFiniteDouble(value.value) : `"${String(value.value)}"`;
    case 'Edm.DateTime':
      return `"${formatDateTimeTicks(value.value)}"`;
    case 'Edm.Binary':
      return `"${value.value.toString('base64')}"`;
    default:
      return assertNever(value);
  }
}
