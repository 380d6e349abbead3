// Entity keys in URLs: `(PartitionKey='p',RowKey='r')` (Azure REST: addressing-table-service-resources). Pure.
import { StorageError } from '../../errors.js';
import type { EntityKeys } from '../../domain/entity.js';

/** decodeURIComponent that answers bad escapes with 400 instead of throwing URIError. */
export function percentDecode(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    throw new StorageError('InvalidUri', 'The requested URI contains an invalid percent-encoding.');
  }
}

/**
 * Parses the already percent-decoded text between the parentheses of an entity URL.
 * Inside a literal `''` is one quote; spaces around `,` and `=` are allowed; the keys may come
 * in either order (unverified, recommendation of Azure REST: addressing-table-service-resources). Returns undefined if
 * the
 * text is not a key predicate.
 */
export function parseKeyPredicate(text: string): EntityKeys | undefined {
  return parseStrict(text) ?? parseUndoubledQuotes(text);
}

function parseStrict(text: string): EntityKeys | undefined {
  const values = new Map<string, string>();
  let i = 0;
  const skipSpaces = (): void => {
    while (text[i] === ' ') i++;
  };
  for (;;) {
    skipSpaces();
    const eq = text.indexOf('=', i);
    if (eq < 0) return undefined;
    const name = text.slice(i, eq).trim();
    if ((name !== 'PartitionKey' && name !== 'RowKey') || values.has(name)) return undefined;
    i = eq + 1;
    skipSpaces();
    if (text[i] !== "'") return undefined;
    i++;
    let value = '';
    for (;;) {
      const quote = text.indexOf("'", i);
      if (quote < 0) return undefined;
      value += text.slice(i, quote);
      if (text[quote + 1] === "'") {
        value += "'";
        i = quote + 2;
      } else {
        i = quote + 1;
        break;
      }
    }
    values.set(name, value);
    skipSpaces();
    if (i === text.length) break;
    if (text[i] !== ',') return undefined;
    i++;
  }
  const partitionKey = values.get('PartitionKey');
  const rowKey = values.get('RowKey');
  return partitionKey === undefined || rowKey === undefined ? undefined : { partitionKey, rowKey };
}

/**
 * Some older .NET clients sent quotes inside keys un-doubled (docs/protocol-notes.md#keys-with-unescaped-quotes): take
 * `PartitionKey='…',RowKey='…'` with `',RowKey='` as the only separator.
 */
function parseUndoubledQuotes(text: string): EntityKeys | undefined {
  const prefix = "PartitionKey='";
  const separator = "',RowKey='";
  if (!text.startsWith(prefix) || !text.endsWith("'")) return undefined;
  const at = text.indexOf(separator);
  if (at < 0 || text.indexOf(separator, at + 1) >= 0) return undefined;
  return { partitionKey: text.slice(prefix.length, at), rowKey: text.slice(at + separator.length, -1) };
}
