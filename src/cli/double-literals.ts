// Keeps Doubles Doubles on the way in from any endpoint. The service writes an integral Double
// without annotation as `2.0` (and so does Azurite), and the SDK's JSON.parse turns that into the
// number 2, which it then reads as an Int32. This policy annotates every number literal with a
// decimal point or an exponent as Edm.Double before the SDK sees the body.
import type { PipelinePolicy } from '@azure/core-rest-pipeline';

const annotationSuffix = '@odata.type';

export const doubleLiteralsPolicy: PipelinePolicy = {
  name: 'ceruleanDoubleLiterals',
  async sendRequest(request, next) {
    const response = await next(request);
    const type = response.headers.get('content-type') ?? '';
    if (response.bodyAsText && response.status === 200 && type.includes('json')) {
      response.bodyAsText = annotateDoubleLiterals(response.bodyAsText);
    }
    return response;
  },
};

/**
 * A query or point-read body with `"name@odata.type":"Edm.Double"` after every member whose value
 * is a number literal with a decimal point or an exponent. One pass that skips over strings; the
 * body is JSON the service sent (were it not, the SDK's own parse reports it). A member that was
 * annotated already gets the same annotation again, which JSON.parse reads as one.
 */
export function annotateDoubleLiterals(body: string): string {
  const parts: string[] = [];
  let copied = 0;
  let lastString = ''; // the raw text of the last string token, quotes included
  let i = 0;
  while (i < body.length) {
    const c = body.charCodeAt(i);
    if (c === quote) {
      const end = stringEnd(body, i);
      if (end === -1) return body;
      lastString = body.slice(i, end);
      i = end;
    } else if (c === colon) {
      let start = i + 1;
      while (isWhitespace(body.charCodeAt(start))) start++;
      const end = numberEnd(body, start);
      if (end > start && /[.eE]/.test(body.slice(start, end))) {
        parts.push(body.slice(copied, end), `,${lastString.slice(0, -1)}${annotationSuffix}":"Edm.Double"`);
        copied = end;
      }
      i = Math.max(end, i + 1);
    } else {
      i++;
    }
  }
  if (copied === 0) return body;
  parts.push(body.slice(copied));
  return parts.join('');
}

const quote = 0x22;
const colon = 0x3a;
const backslash = 0x5c;

/** The index just after the string token that starts at `start`, or -1 if it never ends. */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const close = text.indexOf('"', from);
    if (close === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === backslash) backslashes++;
    if (backslashes % 2 === 0) return close + 1;
    from = close + 1;
  }
}

/** The index just after a number literal at `start` (`start` itself if there is none). */
function numberEnd(text: string, start: number): number {
  let i = start;
  for (;;) {
    const c = text.charCodeAt(i);
    // digits, '-', '+', '.', 'e', 'E'
    if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45) i++;
    else return i;
  }
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}
