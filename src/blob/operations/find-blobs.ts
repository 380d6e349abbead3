// Find Blobs by Tags, in the account or in one container
// (https://learn.microsoft.com/rest/api/storageservices/find-blobs-by-tags,
// find-blobs-by-tags-container). The store finds blobs by one predicate of the expression, through
// its index of tags (blob-store.ts, "Blob index tags"); the others filter what it finds.
import { invalidQueryParameter, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import { int32Max, integerParam } from '../../http/query-params.js';
import type { TagBound, TagPlace, TagQuery, TaggedBlob } from '../../storage/blob-store.js';
import type { BlobCall } from './access.js';
import { findBlobsPageMax } from '../limits.js';
import { holds, parseWhere, TagExpressionError, type TagPredicate, type WhereExpression } from '../tags/expression.js';
import { writeFoundBlobs, type FoundBlob } from '../tags/find-xml.js';
import { xmlReply } from '../wire/reply-headers.js';

/**
 * Candidates one request reads at most, whatever matches: a page may hold fewer than maxresults,
 * with a NextMarker (as list-blobs allows), so a request's work stays bounded when the other
 * predicates reject most of what the indexed one finds.
 */
const candidatesPerRequestMax = 5000;

/** The indexed predicate: the first equality, else the bounds on the first key compared by range. */
function plan(where: WhereExpression): Omit<TagQuery, 'container' | 'after' | 'limit'> {
  const equality = where.predicates.find((predicate) => predicate.operator === '=');
  if (equality !== undefined) {
    const bound = { value: equality.value, inclusive: true };
    return { key: equality.key, lower: bound, upper: bound };
  }
  const key = where.predicates[0]!.key;
  let lower: TagBound | undefined;
  let upper: TagBound | undefined;
  for (const { key: other, operator, value } of where.predicates) {
    if (other !== key) continue;
    if (operator === '>' || operator === '>=') lower = { value, inclusive: operator === '>=' };
    if (operator === '<' || operator === '<=') upper = { value, inclusive: operator === '<=' };
  }
  return { key, lower, upper };
}

function matchesAll(predicates: readonly TagPredicate[], blob: TaggedBlob): boolean {
  const tags = new Map(blob.tags);
  return predicates.every((predicate) => holds(predicate, tags.get(predicate.key)));
}

/** Markers are opaque: base64url of the (value, container, name) the page ended at. */
function encodeMarker(place: TagPlace): string {
  return Buffer.from(JSON.stringify([place.value, place.container, place.name])).toString('base64url');
}

function decodeMarker(marker: string): TagPlace {
  try {
    const [value, container, name] = JSON.parse(Buffer.from(marker, 'base64url').toString('utf8')) as unknown[];
    if (typeof value === 'string' && typeof container === 'string' && typeof name === 'string') {
      return { value, container, name };
    }
  } catch {
    // falls through to the error
  }
  throw invalidQueryParameter('marker', marker, 'The marker is not one this service wrote.');
}

function parseWhereParam(call: BlobCall): { readonly text: string; readonly where: WhereExpression } {
  const text = call.query.get('where');
  if (text === null) throw new StorageError('MissingRequiredQueryParameter', 'The query parameter where is required.');
  try {
    return { text, where: parseWhere(text) };
  } catch (error) {
    // Chosen (unverified): the service's code for an expression it cannot read.
    if (error instanceof TagExpressionError) throw invalidQueryParameter('where', text, error.message);
    throw error;
  }
}

/** 200 with EnumerationResults; `scope` is the container of the request's path, or undefined for the account. */
export async function findBlobsByTags(call: BlobCall, scope: string | undefined): Promise<Reply> {
  const { text, where } = parseWhereParam(call);
  const maxResults = integerParam(call.query, 'maxresults', { min: 1, max: int32Max });
  const limit = Math.min(maxResults ?? findBlobsPageMax, findBlobsPageMax);
  const markerText = call.query.get('marker') ?? '';
  let after = markerText === '' ? undefined : decodeMarker(markerText);
  if (scope !== undefined && where.container !== undefined && where.container !== scope) {
    throw invalidQueryParameter('where', text, '@container names another container than the request.');
  }
  const container = scope ?? where.container;
  if (scope !== undefined && (await call.services.blobs.getContainer(call.account, scope)) === undefined) {
    throw new StorageError('ContainerNotFound');
  }
  const indexed = plan(where);
  const found: TaggedBlob[] = [];
  let read = 0;
  let next: TagPlace | undefined;
  for (;;) {
    const want = Math.min(limit - found.length, candidatesPerRequestMax - read);
    const query = { ...indexed, container, after, limit: want };
    const batch = await call.services.blobs.findBlobsByTags(call.account, query);
    read += batch.length;
    found.push(...batch.filter((blob) => matchesAll(where.predicates, blob)));
    const last = batch.at(-1);
    if (batch.length < want || last === undefined) break;
    after = { value: last.value, container: last.container, name: last.name };
    if (found.length >= limit || read >= candidatesPerRequestMax) {
      next = after;
      break;
    }
  }
  const keys = new Set(where.predicates.map((predicate) => predicate.key));
  const blobs = found.map((blob): FoundBlob => ({
    container: blob.container,
    name: blob.name,
    // find-blobs-by-tags: each blob's tags that the expression names.
    tags: blob.tags.filter(([key]) => keys.has(key)),
  }));
  const body = writeFoundBlobs({
    serviceEndpoint: `${call.baseUrl}/`,
    where: text,
    blobs,
    nextMarker: next === undefined ? '' : encodeMarker(next),
  });
  return xmlReply(200, body);
}
