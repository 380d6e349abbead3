// RFC 2046 §5.1 multipart framing over one complete Buffer, with the field syntax its part headers
// share with HTTP/1.1 (Azure REST: performing-entity-group-transactions). Pure: no I/O. A byte cursor, never a regex
// over the body.
// Line breaks are CRLF in everything real clients send; a bare LF is accepted too, because nothing
// that is valid becomes ambiguous by it.

import { StorageError } from '../errors.js';
import { headersBytesMax } from '../limits.js';

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;
const DASH = 0x2d;
const COLON = 0x3a;

/** Malformed multipart input; `offset` is the byte where parsing stopped. */
export class MultipartSyntaxError extends StorageError {
  readonly offset: number;

  constructor(offset: number, reason: string) {
    super('InvalidInput', `The batch request body is malformed at byte ${offset}: ${reason}.`);
    this.offset = offset;
  }
}

/** Bytes input[start, end) of one Buffer; offsets stay absolute so errors can name them. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export interface MediaType {
  /** `type/subtype`, lower-case. */
  readonly essence: string;
  /** Parameter names lower-case, values as written (quotes removed). */
  readonly parameters: ReadonlyMap<string, string>;
}

export interface HeaderBlock {
  /** Lower-case names; a repeated field's values are joined with ", " as node:http does. */
  readonly headers: ReadonlyMap<string, string>;
  /** First byte after the empty line that ends the block (or the range end if the part ends first). */
  readonly bodyStart: number;
}

export interface Line {
  /** The line without its terminator. */
  readonly text: ByteRange;
  /** First byte of the next line. */
  readonly next: number;
}

// RFC 9110 §5.6.2 tchar and RFC 2046 §5.1.1 bchars, as lookup tables by character code
// (every header name of every batch part is checked: a table is much cheaper than a Set of strings).
const tokenCharacters = characterTable("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
const boundaryCharacters = characterTable(
  "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'()+_,-./:=? ",
);
const boundaryLengthMax = 70;

function characterTable(characters: string): Uint8Array {
  const table = new Uint8Array(128);
  for (let i = 0; i < characters.length; i++) table[characters.charCodeAt(i)] = 1;
  return table;
}

/** Whether every character of `text` is in `table` (characters past ASCII never are). */
function allIn(table: Uint8Array, text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 128 || table[code] === 0) return false;
  }
  return true;
}

export function isToken(text: string): boolean {
  return text.length > 0 && allIn(tokenCharacters, text);
}

/** RFC 2046 §5.1.1: 1-70 bchars, not ending in a space. */
export function isValidBoundary(boundary: string): boolean {
  if (boundary.length === 0 || boundary.length > boundaryLengthMax || boundary.endsWith(' ')) return false;
  return allIn(boundaryCharacters, boundary);
}

/**
 * Parses `type/subtype *( OWS ";" OWS name=value )` (RFC 9110 §8.3.1). A value is a quoted-string
 * or, leniently, any run of characters other than `;`, `"` and whitespace. Undefined if malformed.
 */
export function parseMediaType(text: string): MediaType | undefined {
  const semicolon = text.indexOf(';');
  const essence = (semicolon === -1 ? text : text.slice(0, semicolon)).trim().toLowerCase();
  const slash = essence.indexOf('/');
  if (slash === -1 || !isToken(essence.slice(0, slash)) || !isToken(essence.slice(slash + 1))) return undefined;
  const parameters = new Map<string, string>();
  let position = semicolon === -1 ? text.length : semicolon;
  while (position < text.length) {
    position = skipWhitespace(text, position + 1); // past ';'
    if (position === text.length) break; // a trailing ';' is harmless
    const equals = text.indexOf('=', position);
    if (equals === -1) return undefined;
    const name = text.slice(position, equals).toLowerCase();
    if (!isToken(name) || parameters.has(name)) return undefined;
    const value = text[equals + 1] === '"' ? readQuotedString(text, equals + 1) : readBareValue(text, equals + 1);
    if (value === undefined) return undefined;
    parameters.set(name, value.text);
    position = skipWhitespace(text, value.next);
    if (position < text.length && text[position] !== ';') return undefined;
  }
  return { essence, parameters };
}

function skipWhitespace(text: string, position: number): number {
  while (position < text.length && (text[position] === ' ' || text[position] === '\t')) position++;
  return position;
}

function readQuotedString(text: string, quote: number): { text: string; next: number } | undefined {
  let value = '';
  for (let position = quote + 1; position < text.length; position++) {
    const character = text[position];
    if (character === '"') return { text: value, next: position + 1 };
    if (character === '\\') position++;
    if (position < text.length) value += text[position];
  }
  return undefined;
}

function readBareValue(text: string, start: number): { text: string; next: number } | undefined {
  let end = start;
  while (end < text.length && !';" \t'.includes(text[end] as string)) end++;
  return end === start ? undefined : { text: text.slice(start, end), next: end };
}

/** The line starting at `start`: it ends at LF (a CR before it is dropped) or at `end`. */
export function readLine(input: Buffer, start: number, end: number): Line {
  const lf = input.indexOf(LF, start);
  if (lf === -1 || lf >= end) return { text: { start, end }, next: end };
  const textEnd = lf > start && input[lf - 1] === CR ? lf - 1 : lf;
  return { text: { start, end: textEnd }, next: lf + 1 };
}

/**
 * Reads `name: value` lines (RFC 9112 §5 field syntax; no obsolete line folding) up to the empty
 * line that ends them. A block that runs to the end of its range is complete as well: a part
 * without a body may lose its last line break to the delimiter.
 */
export function parseHeaderBlock(input: Buffer, range: ByteRange, bytesMax: number): HeaderBlock {
  const headers = new Map<string, string>();
  let position = range.start;
  while (position < range.end) {
    const line = readLine(input, position, range.end);
    if (line.text.end - range.start > bytesMax) {
      throw new MultipartSyntaxError(position, `the header block exceeds ${bytesMax} bytes`);
    }
    if (line.text.start === line.text.end) return { headers, bodyStart: line.next };
    const [name, value] = parseHeaderLine(input, line.text);
    const previous = headers.get(name);
    headers.set(name, previous === undefined ? value : `${previous}, ${value}`);
    position = line.next;
  }
  return { headers, bodyStart: range.end };
}

function parseHeaderLine(input: Buffer, line: ByteRange): [string, string] {
  const colon = input.indexOf(COLON, line.start);
  if (colon === -1 || colon >= line.end) throw new MultipartSyntaxError(line.start, 'a header line has no colon');
  const name = input.toString('latin1', line.start, colon);
  if (!isToken(name)) throw new MultipartSyntaxError(line.start, 'a header name is not a token');
  let valueStart = colon + 1;
  let valueEnd = line.end;
  while (valueStart < valueEnd && isWhitespace(input[valueStart])) valueStart++;
  while (valueEnd > valueStart && isWhitespace(input[valueEnd - 1])) valueEnd--;
  for (let position = valueStart; position < valueEnd; position++) {
    const byte = input[position] as number;
    if ((byte < SP && byte !== HTAB) || byte === 0x7f) {
      throw new MultipartSyntaxError(position, 'a header value contains a control character');
    }
  }
  // Latin-1, as node:http decodes top-level headers, so both paths see the same strings.
  return [name.toLowerCase(), input.toString('latin1', valueStart, valueEnd)];
}

function isWhitespace(byte: number | undefined): boolean {
  return byte === SP || byte === HTAB;
}

/**
 * Yields the body parts of the multipart entity in input[range] (RFC 2046 §5.1.1). The preamble
 * before the first delimiter and the epilogue after the close delimiter are skipped; the line
 * break before a delimiter belongs to the delimiter, not to the part. Lazy, so a caller can stop
 * at its own part limit before reading further. Throws MultipartSyntaxError.
 */
export function* bodyParts(input: Buffer, range: ByteRange, boundary: string): Generator<ByteRange, void, undefined> {
  const dashBoundary = Buffer.from(`--${boundary}`, 'latin1');
  // 1. Find the first delimiter: dash-boundary at the very start or after the preamble's line break.
  let delimiter = findDelimiter(input, range.start, range.end, dashBoundary, range.start);
  if (delimiter === undefined) throw new MultipartSyntaxError(range.start, 'the first boundary delimiter is missing');
  for (;;) {
    // 2. `--` right after the boundary makes it the close delimiter: the rest is the epilogue.
    if (delimiter.close) return;
    // 3. Otherwise the part starts after transport padding and the delimiter line's line break.
    const partStart = delimiter.next;
    // 4. The part ends where the next delimiter's line break begins.
    const following = findDelimiter(input, partStart, range.end, dashBoundary, undefined);
    if (following === undefined) throw new MultipartSyntaxError(range.end, 'the close delimiter is missing');
    yield { start: partStart, end: following.partEnd };
    delimiter = following;
  }
}

interface Delimiter {
  /** Where the preceding part ends: the start of the line break that belongs to the delimiter. */
  readonly partEnd: number;
  readonly close: boolean;
  /** First byte after the delimiter line (for a close delimiter: after its `--`). */
  readonly next: number;
}

/**
 * The first delimiter line at or after `from`: dash-boundary at the start of a line (or at
 * `entityStart`, where no line break precedes the first one), followed by `--` or by transport
 * padding and a line break. Text that merely contains the boundary is content.
 */
function findDelimiter(
  input: Buffer,
  from: number,
  end: number,
  dashBoundary: Buffer,
  entityStart: number | undefined,
): Delimiter | undefined {
  for (let at = input.indexOf(dashBoundary, from); at !== -1; at = input.indexOf(dashBoundary, at + 1)) {
    const afterBoundary = at + dashBoundary.length;
    if (afterBoundary > end) return undefined;
    const partEnd = at === entityStart ? at : lineBreakStartBefore(input, at, from);
    if (partEnd === undefined) continue;
    if (afterBoundary + 2 <= end && input[afterBoundary] === DASH && input[afterBoundary + 1] === DASH) {
      return { partEnd, close: true, next: afterBoundary + 2 };
    }
    let position = afterBoundary;
    while (position < end && isWhitespace(input[position])) position++; // transport padding
    if (position < end && input[position] === LF) return { partEnd, close: false, next: position + 1 };
    if (position + 1 < end && input[position] === CR && input[position + 1] === LF) {
      return { partEnd, close: false, next: position + 2 };
    }
  }
  return undefined;
}

/** Start of the CRLF (or bare LF) that ends just before `at`, if it lies within [from, at). */
function lineBreakStartBefore(input: Buffer, at: number, from: number): number | undefined {
  if (at - 1 < from || input[at - 1] !== LF) return undefined;
  return at - 2 >= from && input[at - 2] === CR ? at - 2 : at - 1;
}

/** An HTTP request embedded in a part: its request line, its own headers and its payload. */
export interface EmbeddedHttpRequest {
  /** Request-line method, upper-case (POST, PUT, MERGE, PATCH, DELETE, GET). */
  readonly method: string;
  /** As written: absolute (`http://host/account/t(...)`) or origin-form (`/account/t(...)`). */
  readonly url: string;
  /** Its own headers; lower-case names. */
  readonly headers: ReadonlyMap<string, string>;
  /** Payload with the surrounding CR/LF/space padding trimmed (the JS SDK adds CRLFs). */
  readonly body: Buffer;
}

/** `method SP url SP HTTP/1.x`, header fields, empty line, payload (RFC 9112 §3). */
export function parseHttpRequest(input: Buffer, range: ByteRange): EmbeddedHttpRequest {
  // RFC 9112 §2.2: empty lines before the request line are ignored.
  let requestLine = readLine(input, range.start, range.end);
  while (requestLine.text.start === requestLine.text.end && requestLine.next < range.end) {
    requestLine = readLine(input, requestLine.next, range.end);
  }
  const { start, end } = requestLine.text;
  if (end - start > headersBytesMax) throw syntaxError(start, `the request line exceeds ${headersBytesMax} bytes`);
  const words = input.toString('latin1', start, end).split(' ');
  const [method, url, version] = words;
  if (words.length !== 3 || method === undefined || url === undefined || version === undefined) {
    throw syntaxError(start, 'an operation has no request line of the form "METHOD url HTTP/1.1"');
  }
  if (!/^[A-Za-z]+$/.test(method)) throw syntaxError(start, 'the request method is not a word');
  if (!url.startsWith('/') && !/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url)) {
    throw syntaxError(start, 'the request URL is neither absolute nor an absolute path');
  }
  if (!/^HTTP\/1\.[01]$/.test(version)) throw syntaxError(start, 'the request line does not end in HTTP/1.1');
  const head = parseHeaderBlock(input, { start: requestLine.next, end: range.end }, headersBytesMax);
  return {
    method: method.toUpperCase(),
    url,
    headers: head.headers,
    body: trimPadding(input, { start: head.bodyStart, end: range.end }),
  };
}

/** Azure REST: performing-entity-group-transactions: whitespace around a sub-request body is not part of it. */
function trimPadding(input: Buffer, range: ByteRange): Buffer {
  let { start, end } = range;
  while (start < end && isPadding(input[start])) start++;
  while (end > start && isPadding(input[end - 1])) end--;
  return input.subarray(start, end);
}

function isPadding(byte: number | undefined): boolean {
  return byte === 0x0d || byte === 0x0a || byte === 0x20 || byte === 0x09;
}

function syntaxError(offset: number, reason: string): MultipartSyntaxError {
  return new MultipartSyntaxError(offset, reason);
}
