// OData JSON response bodies for tables and entities at the three metadata levels
// (operations.md §1.2, §2.1–2.2, §5.1–5.3; data-model.md §2). Pure string building, no I/O.
import { assertNever } from '../domain/assert.js';
import { edmValueJson, type EdmValue, formatDateTimeTicks } from '../domain/edm.js';
import { type Entity, type Properties } from '../domain/entity.js';
import { etagOfTimestampText } from '../domain/etag.js';

export type MetadataLevel = 'none' | 'minimal' | 'full';

const levelsByODataParameter: ReadonlyMap<string, MetadataLevel> = new Map([
  ['nometadata', 'none'],
  ['minimalmetadata', 'minimal'],
  ['fullmetadata', 'full'],
]);

/**
 * From `$format` (wins when given) or `Accept` (operations.md §1.2): the first JSON media range
 * with a known `odata=` parameter decides; anything else, or nothing, means minimal metadata.
 */
export function negotiateMetadata(format: string | undefined, accept: string | undefined): MetadataLevel {
  const value = format || accept;
  if (value === undefined) return 'minimal';
  for (const range of value.split(',')) {
    const level = levelOfMediaRange(range);
    if (level !== undefined) return level;
  }
  return 'minimal';
}

function levelOfMediaRange(range: string): MetadataLevel | undefined {
  const [mediaType = '', ...parameters] = range.split(';');
  const type = mediaType.trim().toLowerCase();
  if (type !== 'application/json' && type !== 'application/*' && type !== '*/*') return undefined;
  for (const parameter of parameters) {
    const equals = parameter.indexOf('=');
    if (equals >= 0 && parameter.slice(0, equals).trim().toLowerCase() === 'odata') {
      return levelsByODataParameter.get(parameter.slice(equals + 1).trim().toLowerCase());
    }
  }
  return undefined;
}

/** Response Content-Type for a JSON body at that level, as the service writes it (operations.md §1.2). */
export function jsonContentType(level: MetadataLevel): string {
  return `application/json; odata=${level === 'none' ? 'no' : level}metadata; streaming=true; charset=utf-8`;
}

export interface EntityUrlContext {
  /** e.g. `http://127.0.0.1:10002/devstoreaccount1` (path-style) or `https://acct.table.core.windows.net`. */
  readonly baseUrl: string;
  readonly account: string;
  readonly table: string;
}

const systemPropertyNames: ReadonlySet<string> = new Set(['PartitionKey', 'RowKey', 'Timestamp']);

/**
 * One entity as JSON object text, members in the service's order (operations.md §1.2).
 * With `select`, exactly the listed properties come out, a missing one as `null` (query.md §2);
 * `odata.etag` stays. `single` adds `odata.metadata` for single-entity responses.
 */
export function encodeEntity(
  entity: Entity,
  level: MetadataLevel,
  ctx: EntityUrlContext,
  options: { readonly select?: readonly string[]; readonly single?: boolean } = {},
): string {
  const { select, single = false } = options;
  const members: string[] = [];
  const timestampText = formatDateTimeTicks(entity.timestamp);
  if (level !== 'none') {
    if (single) {
      const selectSuffix = select === undefined ? '' : `&$select=${select.join(',')}`;
      members.push(member('odata.metadata', `${ctx.baseUrl}/$metadata#${ctx.table}/@Element${selectSuffix}`));
    }
    const etag = member('odata.etag', etagOfTimestampText(timestampText));
    if (level === 'full') {
      const path = entityPath(ctx.table, entity.partitionKey, entity.rowKey);
      members.push(
        member('odata.type', `${ctx.account}.${ctx.table}`),
        member('odata.id', `${ctx.baseUrl}/${path}`),
        etag,
        member('odata.editLink', path),
      );
    } else {
      members.push(etag);
    }
  }

  const selected = select === undefined ? undefined : new Set(select);
  if (selected === undefined || selected.has('PartitionKey')) members.push(member('PartitionKey', entity.partitionKey));
  if (selected === undefined || selected.has('RowKey')) members.push(member('RowKey', entity.rowKey));
  if (selected === undefined || selected.has('Timestamp')) {
    if (level === 'full') members.push('"Timestamp@odata.type":"Edm.DateTime"');
    members.push(member('Timestamp', timestampText));
  }
  // Annotations are the same in minimal and full metadata: the docs' full-metadata Insert Entity
  // example leaves Int32 (`"Age":23`) unannotated, so full adds only the odata.* members above.
  const annotate = level !== 'none';
  if (selected === undefined && annotate && entity.minimalJson !== undefined) {
    // The store's text is exactly these members: splice it instead of re-encoding every value.
    if (entity.minimalJson.length > 2) members.push(entity.minimalJson.slice(1, -1));
  } else if (selected === undefined) {
    for (const [name, value] of entity.properties) members.push(encodeProperty(name, value, annotate));
  } else {
    for (const name of selected) {
      if (systemPropertyNames.has(name)) continue;
      const value = entity.properties.get(name);
      members.push(value === undefined ? `${JSON.stringify(name)}:null` : encodeProperty(name, value, annotate));
    }
  }
  return `{${members.join(',')}}`;
}

/**
 * Custom properties as one JSON object at minimal metadata. A store may hand out text it promises
 * is byte-identical to this (Entity.minimalJson); responses then splice that text instead.
 */
export function encodeMinimalProperties(properties: Properties): string {
  const members: string[] = [];
  for (const [name, value] of properties) members.push(encodeProperty(name, value, true));
  return `{${members.join(',')}}`;
}

/** A query response body around already-encoded entities, so large pages need no object tree. */
export function encodeEntityFeed(level: MetadataLevel, ctx: EntityUrlContext, entityTexts: readonly string[]): string {
  return feed(level, `${ctx.baseUrl}/$metadata#${ctx.table}`, entityTexts);
}

/** One table (operations.md §2.1–2.2); `single` makes it a whole response (`Tables/@Element`). */
export function encodeTable(
  name: string,
  level: MetadataLevel,
  baseUrl: string,
  account: string,
  single: boolean,
): string {
  const members: string[] = [];
  if (single && level !== 'none') members.push(member('odata.metadata', `${baseUrl}/$metadata#Tables/@Element`));
  if (level === 'full') {
    // Table names are alphanumeric (data-model.md §5.1), so the link needs no escaping.
    const link = `Tables('${name}')`;
    members.push(
      member('odata.type', `${account}.Tables`),
      member('odata.id', `${baseUrl}/${link}`),
      member('odata.editLink', link),
    );
  }
  members.push(member('TableName', name));
  return `{${members.join(',')}}`;
}

export function encodeTableFeed(
  names: readonly string[],
  level: MetadataLevel,
  baseUrl: string,
  account: string,
): string {
  const texts = names.map((name) => encodeTable(name, level, baseUrl, account, false));
  return feed(level, `${baseUrl}/$metadata#Tables`, texts);
}

/**
 * `table(PartitionKey='…',RowKey='…')` for Location, DataServiceId, odata.id and odata.editLink:
 * quotes doubled, then encodeURIComponent (operations.md §1.3; other characters unverified).
 */
export function entityPath(table: string, partitionKey: string, rowKey: string): string {
  return `${table}(PartitionKey='${keyLiteral(partitionKey)}',RowKey='${keyLiteral(rowKey)}')`;
}

function keyLiteral(key: string): string {
  // encodeURIComponent throws on lone surrogates; validated keys have none, but never crash here.
  return encodeURIComponent(key.replace(/'/g, "''").replace(/\p{Cs}/gu, '\ufffd'));
}

function feed(level: MetadataLevel, metadataUrl: string, texts: readonly string[]): string {
  const value = `"value":[${texts.join(',')}]`;
  return level === 'none' ? `{${value}}` : `{${member('odata.metadata', metadataUrl)},${value}}`;
}

function member(name: string, text: string): string {
  return `"${name}":${JSON.stringify(text)}`;
}

/** `"name":value`, preceded by `"name@odata.type":"Edm.X"` when the type is not inferable from JSON. */
function encodeProperty(name: string, value: EdmValue, annotate: boolean): string {
  const json = `${JSON.stringify(name)}:${edmValueJson(value)}`;
  return annotate && needsAnnotation(value) ? `${JSON.stringify(`${name}@odata.type`)}:"${value.type}",${json}` : json;
}

/** data-model.md §2.2–2.5 and conformance §25. */
function needsAnnotation(value: EdmValue): boolean {
  switch (value.type) {
    case 'Edm.String':
    case 'Edm.Int32':
    case 'Edm.Boolean':
      return false;
    case 'Edm.Double':
      // A finite Double is a JSON number with a decimal point or exponent, never annotated: an
      // annotated number breaks clients that read every annotated value as a string
      // (data-model.md §2.3). NaN and ±Infinity are strings, so they need the annotation.
      return !Number.isFinite(value.value);
    case 'Edm.Int64':
    case 'Edm.DateTime':
    case 'Edm.Guid':
    case 'Edm.Binary':
      return true;
    default:
      return assertNever(value);
  }
}
