// Reading OData values in tests: Timestamp/ETag text to 100 ns ticks, entity member sets.

const isoUtc = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?Z$/;

/** Ticks (100 ns) since the Unix epoch of a service DateTime text; throws on anything else. */
export function isoTicks(text: string): bigint {
  const m = isoUtc.exec(text);
  if (m === null) throw new Error(`not a service DateTime: ${text}`);
  const [, y, mo, d, h, mi, s, frac = ''] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  return BigInt(ms) * 10_000n + BigInt(frac.padEnd(7, '0'));
}

const etagShape = /^W\/"datetime'(.+)'"$/;

/** The Timestamp text inside `W/"datetime'…'"` (colons percent-encoded on the wire). */
export function etagTimestamp(etag: string): string {
  const m = etagShape.exec(etag);
  if (m === null) throw new Error(`not a datetime ETag: ${etag}`);
  return decodeURIComponent(m[1]!);
}

export function etagTicks(etag: string): bigint {
  return isoTicks(etagTimestamp(etag));
}

/** Member names of a JSON object, sorted, for exact set comparisons. */
export function memberSet(obj: object): string[] {
  return Object.keys(obj).sort();
}
