// Walking the members of an entity's properties as JSON object text without parsing the values:
// the stored and minimal-metadata forms are flat objects `{"name":scalar,...}` (odata.ts,
// storage/stored-json.ts), so responses can drop or pick members by slicing the text.
//
// Why slicing is safe: inside a JSON string every `"` is escaped as `\"`, so a `"` preceded by an
// even number of backslashes ends the string. A member's value is a string (ends at such a quote)
// or a number, true, false or null (ends at the next `,` or `}`, which none of them contains).
// Nothing in a string value, whatever it holds, can be taken for a member boundary.

const quote = 34; // "
const backslash = 92; // \

/** The end (index of the closing quote) of the JSON string whose opening quote is at `start`. */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    if (end < 0) throw new Error('json-members: unterminated string');
    if (!isEscaped(text, end)) return end;
    end = text.indexOf('"', end + 1);
  }
}

/**
 * Calls `visit` for each member of a flat JSON object text with scalar values, in order:
 * `text.slice(keyStart, valueEnd)` is the member (`"name":value`), `text.slice(keyStart + 1,
 * keyEnd)` the name as JSON string content (raw unless it holds a backslash).
 */
export function forEachMember(text: string, visit: (keyStart: number, keyEnd: number, valueEnd: number) => void): void {
  if (text.charCodeAt(0) !== 123 /* { */) throw new Error('json-members: not an object');
  let at = 1;
  if (text.charCodeAt(at) === 125 /* } */) return;
  for (;;) {
    if (text.charCodeAt(at) !== quote) throw new Error('json-members: expected a member name');
    const keyEnd = stringEnd(text, at);
    if (text.charCodeAt(keyEnd + 1) !== 58 /* : */) throw new Error('json-members: expected a colon');
    const valueStart = keyEnd + 2;
    let valueEnd: number;
    if (text.charCodeAt(valueStart) === quote) {
      valueEnd = stringEnd(text, valueStart) + 1;
    } else {
      const comma = text.indexOf(',', valueStart);
      valueEnd = comma < 0 ? text.length - 1 : comma;
      if (text.charCodeAt(valueEnd) !== 44 /* , */ && text.charCodeAt(valueEnd) !== 125) {
        throw new Error('json-members: malformed scalar');
      }
    }
    visit(at, keyEnd, valueEnd);
    const next = text.charCodeAt(valueEnd);
    if (next === 125) return;
    if (next !== 44) throw new Error('json-members: expected a comma');
    at = valueEnd + 1;
  }
}

/** The name of a member as visited by forEachMember. */
export function memberName(text: string, keyStart: number, keyEnd: number): string {
  const raw = text.slice(keyStart + 1, keyEnd);
  return raw.includes('\\') ? (JSON.parse(text.slice(keyStart, keyEnd + 1)) as string) : raw;
}

const annotationKeyEnd = '@odata.type"';

/** Whether the member name ending at `keyEnd` (its closing quote) is a type annotation. */
export function isAnnotationKey(text: string, keyEnd: number): boolean {
  return text.startsWith(annotationKeyEnd, keyEnd + 1 - annotationKeyEnd.length);
}

/**
 * The object text without its type annotations (`"name@odata.type":"Edm.X",` members), found
 * by search rather than by walking every member: an `@odata.type"` followed by `:` ends a member
 * name (see the top of this file: that quote is unescaped, and a value is never followed by `:`),
 * the name starts at the nearest unescaped quote before it (a name holds none), and its value is
 * a type name, which holds no quote.
 */
export function withoutAnyAnnotations(text: string): string {
  const marker = '@odata.type":"';
  let hit = text.indexOf(marker);
  if (hit < 0) return text;
  let out = '';
  let copiedTo = 0;
  while (hit >= 0) {
    let keyStart = text.lastIndexOf('"', hit);
    while (isEscaped(text, keyStart)) keyStart = text.lastIndexOf('"', keyStart - 1);
    const valueEnd = text.indexOf('"', hit + marker.length) + 1;
    if (keyStart < copiedTo || valueEnd === 0 || text.charCodeAt(valueEnd) !== 44 /* , */) {
      throw new Error('json-members: malformed annotation');
    }
    out += text.slice(copiedTo, keyStart);
    copiedTo = valueEnd + 1;
    hit = text.indexOf(marker, copiedTo);
  }
  return out + text.slice(copiedTo);
}

function isEscaped(text: string, quoteAt: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(quoteAt - 1 - backslashes) === backslash) backslashes++;
  return backslashes % 2 === 1;
}

/**
 * The object text without the type annotations (`"name@odata.type":"Edm.X",` members) that
 * `keep(type, annotated value text)` does not keep; without `keep`, without all of them. The text
 * itself when there is nothing to drop. An annotation always comes right before its value.
 */
export function withoutAnnotations(text: string, keep?: (type: string, valueText: string) => boolean): string {
  if (!text.includes(annotationKeyEnd)) return text;
  let out = '';
  let copiedTo = 0;
  let annotationStart = -1;
  let annotationType = '';
  forEachMember(text, (keyStart, keyEnd, valueEnd) => {
    if (isAnnotationKey(text, keyEnd)) {
      annotationStart = keyStart;
      annotationType = text.slice(keyEnd + 3, valueEnd - 1);
      return;
    }
    if (annotationStart < 0) return;
    if (keep === undefined || !keep(annotationType, text.slice(keyEnd + 2, valueEnd))) {
      out += text.slice(copiedTo, annotationStart);
      copiedTo = keyStart;
    }
    annotationStart = -1;
  });
  return copiedTo === 0 ? text : out + text.slice(copiedTo);
}
