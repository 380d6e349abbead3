// OData JSON response bodies for tables and entities at the three metadata levels
// (Azure REST: payload-format-for-table-service-operations, query-tables, create-table, insert-entity, query-entities).
// Pure string and byte building, no I/O.
import assert from 'node:assert/strict';
import { assertNever } from '../../domain/assert.js';
import { edmValueJson, type EdmValue, formatDateTimeTicks } from '../../domain/edm.js';
import { type Entity, type Properties } from '../../domain/entity.js';
import { etagOfTimestampText } from '../../domain/etag.js';
import {
  forEachMember,
  isAnnotationKey,
  memberName,
  withoutAnnotations,
  withoutAnyAnnotations,
} from '../../domain/json-members.js';
import { ByteWriter, type PooledBytes } from './byte-writer.js';

export type MetadataLevel = 'none' | 'minimal' | 'full';

const levelsByODataParameter: ReadonlyMap<string, MetadataLevel> = new Map([
  ['nometadata', 'none'],
  ['minimalmetadata', 'minimal'],
  ['fullmetadata', 'full'],
]);

/**
 * From `$format` (wins when given) or `Accept` (Azure REST: payload-format-for-table-service-operations): the first
 * JSON media range
 * with a known `odata=` parameter decides; anything else, or nothing, means minimal metadata.
 */
export function negotiateMetadata(format: string | undefined, accept: string | undefined): MetadataLevel {
  const value = format || accept;
  if (value === undefined) return 'minimal';
  let level = negotiated.get(value);
  if (level === undefined) {
    level =
      value
        .split(',')
        .map(levelOfMediaRange)
        .find((found) => found !== undefined) ?? 'minimal';
    // Clients send a handful of distinct values: a small memo, emptied when full (bounded memory).
    if (value.length <= negotiatedLengthMax) {
      if (negotiated.size >= negotiatedMax) negotiated.clear();
      negotiated.set(value, level);
    }
  }
  return level;
}

const negotiated = new Map<string, MetadataLevel>();
const negotiatedMax = 64;
const negotiatedLengthMax = 256;

function levelOfMediaRange(range: string): MetadataLevel | undefined {
  const [mediaType = '', ...parameters] = range.split(';');
  const type = mediaType.trim().toLowerCase();
  if (type !== 'application/json' && type !== 'application/*' && type !== '*/*') return undefined;
  for (const parameter of parameters) {
    const equals = parameter.indexOf('=');
    if (equals >= 0 && parameter.slice(0, equals).trim().toLowerCase() === 'odata') {
      return levelsByODataParameter.get(
        parameter
          .slice(equals + 1)
          .trim()
          .toLowerCase(),
      );
    }
  }
  return undefined;
}

/**
 * Response Content-Type for a JSON body at that level, as the service writes it (Azure REST:
 * payload-format-for-table-service-operations).
 */
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

export interface EncodeOptions {
  /** Exactly these properties come out, a missing one as `null` (Azure REST: querying-tables-and-entities). */
  readonly select?: readonly string[];
  /** Adds `odata.metadata`, for single-entity responses. */
  readonly single?: boolean;
}

/** Encodes entities of one response; made once per response, so what all its entities share is built once. */
export type EntityEncoder = (entity: Entity) => string;

/**
 * One entity as JSON object text, members in the service's order (Azure REST:
 * payload-format-for-table-service-operations).
 * With `select`, exactly the listed properties come out, a missing one as `null` (Azure REST:
 * querying-tables-and-entities);
 * `odata.etag` stays. `single` adds `odata.metadata` for single-entity responses.
 */
export function encodeEntity(
  entity: Entity,
  level: MetadataLevel,
  ctx: EntityUrlContext,
  options: EncodeOptions = {},
): string {
  return entityEncoder(level, ctx, options)(entity);
}

/**
 * The encoder behind encodeEntity. Where the entity carries its properties as text (Entity.json),
 * its properties are never decoded: minimal and full metadata splice the text (less the Double
 * annotations the wire leaves out), no metadata drops every type annotation, and `$select` picks
 * members out of it. Else every
 * property is encoded from its value; both ways give the same bytes (tests/table/wire/odata-fast.test.ts).
 */
export function entityEncoder(level: MetadataLevel, ctx: EntityUrlContext, options: EncodeOptions = {}): EntityEncoder {
  const { head, properties } = entityParts(level, ctx, options);
  return (entity) => {
    const text = head(entity);
    const members = properties(entity);
    if (members === '') return `${text}}`;
    return text.length === 1 ? `{${members}}` : `${text},${members}}`;
  };
}

/**
 * A query response body around its entities as UTF-8 bytes, the same bytes as encodeEntityFeed
 * around entityEncoder's texts (tests/table/wire/odata-fast.test.ts). Each entity's stored text is
 * written into the body where it can be, with no string made of the whole entity or page.
 * Release the bytes once the body has been sent (its buffer is reused).
 */
export function encodeEntityFeedBytes(
  level: MetadataLevel,
  ctx: EntityUrlContext,
  entities: readonly Entity[],
  options: EncodeOptions = {},
): PooledBytes {
  const { head, properties, wholeObject } = entityParts(level, ctx, options);
  const writer = new ByteWriter(Math.min(entities.length * feedBytesPerEntity + 4096, feedBytesGuessMax));
  writer.text(feedStart(level, `${ctx.baseUrl}/$metadata#${ctx.table}`));
  for (let i = 0; i < entities.length; i++) {
    const entity = entities[i]!;
    if (i > 0) writer.ascii(comma);
    const headText = head(entity);
    writer.text(headText);
    const object = wholeObject(entity);
    if (object === undefined) {
      const members = properties(entity);
      if (members !== '') {
        if (headText.length > 1) writer.ascii(comma);
        writer.text(members);
      }
      writer.ascii(closeBrace);
    } else if (object.length === 2) {
      writer.ascii(closeBrace); // `{}`: no custom properties
    } else {
      // (Without $select the head always holds PartitionKey: it never ends at its own `{`.)
      // The object's `{` lands where the head's members end: a comma joins the two.
      const braceAt = writer.length;
      writer.text(object);
      writer.setAscii(braceAt, comma);
    }
  }
  writer.text(']}');
  if (entities.length > 0) feedBytesPerEntity = Math.ceil((writer.length / entities.length) * 1.1);
  return writer.finish();
}

/** The size of the entities of the last page written, to size the next page's buffer. */
let feedBytesPerEntity = 1024;
/** A guess never reserves more than this up front (after a page of huge entities, say): beyond it the buffer grows. */
const feedBytesGuessMax = 4 << 20;

const comma = 44;
const closeBrace = 125;
/** Marks in entityParts' head text where a RowKey's path literal or JSON string goes. */
const pathSlot = '\u0001';
const rowKeySlot = '\u0002';
const slotPattern = /([\u0001\u0002])/;

/**
 * An entity encoder in two parts: `head` is the object text up to the custom properties (`{` and
 * the control and system members, no trailing comma) and `properties` the custom properties as
 * members without braces (`''` for none). `wholeObject` is the custom properties as a whole object
 * text when the entity carries them so (all of them, at that level), else undefined.
 */
function entityParts(
  level: MetadataLevel,
  ctx: EntityUrlContext,
  options: EncodeOptions,
): {
  head: (entity: Entity) => string;
  properties: (entity: Entity) => string;
  wholeObject: (entity: Entity) => string | undefined;
} {
  const { select, single = false } = options;
  const selected = select === undefined ? undefined : new Set(select);
  const customSelected =
    selected === undefined ? undefined : [...selected].filter((name) => !systemPropertyNames.has(name));
  const annotate = level !== 'none';
  const shape: HeadShape = {
    level,
    ctx,
    leadMembers: leadMembersOf(level, ctx, select, single),
    // Paths are percent-encoded ASCII without quotes or backslashes (entityPath): JSON-safe as they are.
    idStart: member('odata.id', `${ctx.baseUrl}/`).slice(0, -1),
    wantPartitionKey: selected === undefined || selected.has('PartitionKey'),
    wantRowKey: selected === undefined || selected.has('RowKey'),
    wantTimestamp: selected === undefined || selected.has('Timestamp'),
  };
  const { wantRowKey } = shape;

  // The head is text that entities of one page mostly share (they share a Timestamp in a batch
  // and a PartitionKey in a partition scan) around the RowKey's parts: `pieces[0]`, then for each
  // slot the RowKey's path literal (full metadata's odata.id and editLink) or its JSON string,
  // then the next piece. The pieces are made again when Timestamp or PartitionKey changes.
  let lastTicks: bigint | undefined;
  let lastPartitionKey: string | undefined;
  let pieces: string[] = [];
  let slots: string[] = [];
  const rebuild = (entity: Entity): void => {
    // The slot marks are control characters, which every other part holds only JSON-escaped.
    const parts = `{${headMembers(shape, entity).join(',')}`.split(slotPattern);
    pieces = parts.filter((_, i) => i % 2 === 0);
    slots = parts.filter((_, i) => i % 2 === 1);
    assert.equal(
      slots.length,
      (level === 'full' ? 2 : 0) + (wantRowKey ? 1 : 0),
      'odata: a slot mark in the shared text',
    );
  };

  const head = (entity: Entity): string => {
    if (entity.timestamp !== lastTicks || entity.partitionKey !== lastPartitionKey) {
      lastTicks = entity.timestamp;
      lastPartitionKey = entity.partitionKey;
      rebuild(entity);
    }
    let text = pieces[0]!;
    if (slots.length === 0) return text;
    const path = level === 'full' ? keyLiteral(entity.rowKey) : '';
    const rowKey = wantRowKey ? JSON.stringify(entity.rowKey) : '';
    for (let i = 0; i < slots.length; i++) text += `${slots[i] === pathSlot ? path : rowKey}${pieces[i + 1]!}`;
    return text;
  };
  const properties = (entity: Entity): string =>
    customSelected === undefined
      ? allProperties(entity, annotate)
      : selectedProperties(entity, customSelected, annotate);
  const wholeObject = (entity: Entity): string | undefined =>
    customSelected === undefined ? propertiesObject(entity, annotate) : undefined;
  return { head, properties, wholeObject };
}

/** What the head of every entity of one response shares. */
interface HeadShape {
  readonly level: MetadataLevel;
  readonly ctx: EntityUrlContext;
  /** odata.metadata of a single entity, odata.type at full metadata. */
  readonly leadMembers: readonly string[];
  /** `"odata.id":"<base>/`, without its closing quote. */
  readonly idStart: string;
  readonly wantPartitionKey: boolean;
  readonly wantRowKey: boolean;
  readonly wantTimestamp: boolean;
}

function leadMembersOf(
  level: MetadataLevel,
  ctx: EntityUrlContext,
  select: readonly string[] | undefined,
  single: boolean,
): string[] {
  const leadMembers: string[] = [];
  if (single && level !== 'none') {
    const selectSuffix = select === undefined ? '' : `&$select=${select.join(',')}`;
    leadMembers.push(member('odata.metadata', `${ctx.baseUrl}/$metadata#${ctx.table}/@Element${selectSuffix}`));
  }
  if (level === 'full') leadMembers.push(member('odata.type', `${ctx.account}.${ctx.table}`));
  return leadMembers;
}

/** The head's members for one entity, with slot marks where the RowKey's parts go. */
function headMembers(shape: HeadShape, entity: Entity): string[] {
  const { level, ctx, idStart } = shape;
  const timestamp = formatDateTimeTicks(entity.timestamp);
  const etagMember = member('odata.etag', etagOfTimestampText(timestamp));
  const members = [...shape.leadMembers];
  if (level === 'full') {
    const pathStart = entityPathStart(ctx.table, entity.partitionKey);
    members.push(`${idStart}${pathStart}${pathSlot}')"`, etagMember, `"odata.editLink":"${pathStart}${pathSlot}')"`);
  } else if (level === 'minimal') {
    members.push(etagMember);
  }
  if (shape.wantPartitionKey) members.push(member('PartitionKey', entity.partitionKey));
  if (shape.wantRowKey) members.push(`"RowKey":${rowKeySlot}`);
  if (shape.wantTimestamp) {
    if (level === 'full') members.push('"Timestamp@odata.type":"Edm.DateTime"');
    members.push(member('Timestamp', timestamp));
  }
  return members;
}

/** Every custom property as members (no braces), `''` when there are none. */
function allProperties(entity: Entity, annotate: boolean): string {
  const json = propertiesObject(entity, annotate);
  if (json === undefined) {
    const members: string[] = [];
    for (const [name, value] of entity.properties) members.push(encodeProperty(name, value, annotate));
    return members.join(',');
  }
  return json.slice(1, -1);
}

/** The custom properties as one object text, annotated or not, where the entity carries text to derive it from. */
function propertiesObject(entity: Entity, annotate: boolean): string | undefined {
  const { json } = entity;
  if (json === undefined) return undefined;
  return annotate ? minimalJsonOf(json) : withoutAnyAnnotations(json);
}

/**
 * The minimal-metadata encoding of the properties (encodeMinimalProperties) from Entity.json,
 * without decoding it. The two differ only in the annotation of Doubles whose value is a JSON
 * number, which the wire leaves out (Azure REST: payload-format-for-table-service-operations):
 * dropping those gives the same bytes.
 */
export function minimalJsonOf(json: string): string {
  // Cheap test first: most entities have no Double annotation at all. `Double"` is found several
  // times faster than `"Edm.Double"`: a search keyed on `"` stops at every member of the text.
  if (!json.includes('Double"') || !json.includes('"Edm.Double"')) return json;
  return withoutAnnotations(json, (type, valueText) => type !== 'Edm.Double' || valueText.startsWith('"'));
}

/** The selected custom properties in the order asked, a missing one as `null`. */
function selectedProperties(entity: Entity, names: readonly string[], annotate: boolean): string {
  if (entity.json === undefined) {
    const members = names.map((name) => {
      const value = entity.properties.get(name);
      return value === undefined ? `${JSON.stringify(name)}:null` : encodeProperty(name, value, annotate);
    });
    return members.join(',');
  }
  const json = minimalJsonOf(entity.json);
  const found = new Map<string, string>();
  let annotationStart = -1;
  forEachMember(json, (keyStart, keyEnd, valueEnd) => {
    if (isAnnotationKey(json, keyEnd)) {
      annotationStart = keyStart;
      return;
    }
    const name = memberName(json, keyStart, keyEnd);
    if (names.includes(name))
      found.set(name, json.slice(annotate && annotationStart >= 0 ? annotationStart : keyStart, valueEnd));
    annotationStart = -1;
  });
  return names.map((name) => found.get(name) ?? `${JSON.stringify(name)}:null`).join(',');
}

/**
 * Custom properties as one JSON object at minimal metadata. A store may hand out text it promises
 * gives this through minimalJsonOf (Entity.json); responses then splice that text instead.
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

/** One table (Azure REST: query-tables, create-table); `single` makes it a whole response (`Tables/@Element`). */
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
    // Table names are alphanumeric (Azure REST: understanding-the-table-service-data-model), so the link needs no
    // escaping.
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
 * quotes doubled, then encodeURIComponent (Azure REST: addressing-table-service-resources; other characters
 * unverified).
 */
export function entityPath(table: string, partitionKey: string, rowKey: string): string {
  return `${entityPathStart(table, partitionKey)}${keyLiteral(rowKey)}')`;
}

/** entityPath up to the RowKey literal, shared by the entities of one partition. */
function entityPathStart(table: string, partitionKey: string): string {
  return `${table}(PartitionKey='${keyLiteral(partitionKey)}',RowKey='`;
}

/** Characters encodeURIComponent leaves as they are, except `'` (doubled in a key literal). */
const plainKey = /^[A-Za-z0-9_.!~*()-]*$/;

function keyLiteral(key: string): string {
  if (plainKey.test(key)) return key;
  // encodeURIComponent throws on lone surrogates; validated keys have none, but never crash here.
  return encodeURIComponent(key.replace(/'/g, "''").replace(/\p{Cs}/gu, '\ufffd'));
}

function feed(level: MetadataLevel, metadataUrl: string, texts: readonly string[]): string {
  return `${feedStart(level, metadataUrl)}${texts.join(',')}]}`;
}

/** A feed's text up to its first item. */
function feedStart(level: MetadataLevel, metadataUrl: string): string {
  return level === 'none' ? '{"value":[' : `{${member('odata.metadata', metadataUrl)},"value":[`;
}

function member(name: string, text: string): string {
  return `"${name}":${JSON.stringify(text)}`;
}

/** `"name":value`, preceded by `"name@odata.type":"Edm.X"` when the type is not inferable from JSON. */
function encodeProperty(name: string, value: EdmValue, annotate: boolean): string {
  const json = `${JSON.stringify(name)}:${edmValueJson(value)}`;
  return annotate && needsAnnotation(value) ? `${JSON.stringify(`${name}@odata.type`)}:"${value.type}",${json}` : json;
}

/** Azure REST: payload-format-for-table-service-operations and docs/protocol-notes.md#numbers-in-responses. */
function needsAnnotation(value: EdmValue): boolean {
  switch (value.type) {
    case 'Edm.String':
    case 'Edm.Int32':
    case 'Edm.Boolean':
      return false;
    case 'Edm.Double':
      // A finite Double is a JSON number with a decimal point or exponent, never annotated: an
      // annotated number breaks clients that read every annotated value as a string
      // (Azure REST: payload-format-for-table-service-operations). NaN and ±Infinity are strings, so they need the
      // annotation.
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
