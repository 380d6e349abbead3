// List Blobs (https://learn.microsoft.com/rest/api/storageservices/list-blobs): a page of a
// container's blobs in name order, with virtual folders (BlobPrefix) when a delimiter is given.
// A folder counts as one result and is stepped over with one query from just past its names, so a
// folder holding millions of blobs costs no more than one holding one.
import { invalidQueryParameter, StorageError } from '../../errors.js';
import { int32Max, integerParam } from '../../http/query-params.js';
import type { Reply } from '../../http/respond.js';
import type { BlobRecord, ListedBlob } from '../../storage/blob-store.js';
import { softDeletedView } from './soft-delete.js';
import type { BlobCall } from './access.js';
import { listBlobsPageMax } from '../limits.js';
import { decodeBlobState } from '../state/blob.js';
import { writeBlobListing, type ListEntry } from '../wire/list-blobs-xml.js';
import { xmlReply } from '../wire/reply-headers.js';

/** include= values: these change the listing; the others are accepted and change nothing here. */
const includeValues = new Set([
  'snapshots',
  'metadata',
  'uncommittedblobs',
  'copy',
  'versions',
  'tags',
  'deleted',
  // No immutability or legal holds in Cerulean: nothing to add for them.
  'deletedwithversions',
  'immutabilitypolicy',
  'legalhold',
  'permissions',
]);

function includeOf(query: URLSearchParams): Set<string> {
  const include = new Set<string>();
  const text = query.get('include') ?? '';
  for (const value of text.split(',')) {
    const name = value.trim().toLowerCase();
    if (name === '') continue;
    if (!includeValues.has(name)) throw invalidQueryParameter('include', text, `'${value}' is not a value of include.`);
    include.add(name);
  }
  return include;
}

type Position = { readonly name: string; readonly snapshot: string };

/** Markers are opaque: base64url of the (name, snapshot) the next page starts at. */
function encodeMarker(position: Position): string {
  return Buffer.from(JSON.stringify([position.name, position.snapshot])).toString('base64url');
}

function decodeMarker(marker: string): Position {
  try {
    const [name, snapshot] = JSON.parse(Buffer.from(marker, 'base64url').toString('utf8')) as unknown[];
    if (typeof name === 'string' && typeof snapshot === 'string') return { name, snapshot };
  } catch {
    // falls through to the error
  }
  throw invalidQueryParameter('marker', marker, 'The marker is not one this service wrote.');
}

/** The smallest name after every name that starts with `folder` (its last character stepped up by one). */
function pastFolder(folder: string): string {
  const last = folder.charCodeAt(folder.length - 1);
  return folder.slice(0, -1) + String.fromCharCode(last + 1);
}

function positionOf(listed: ListedBlob): Position {
  return listed.kind === 'blob'
    ? { name: listed.record.name, snapshot: listed.record.snapshot }
    : { name: listed.name, snapshot: '' };
}

interface Page {
  readonly entries: ListEntry[];
  readonly next: Position | undefined;
}

/** Up to `limit` entries from `from`, folders folded; `next` is where the following page starts. */
async function collect(
  call: BlobCall,
  container: string,
  options: {
    prefix: string;
    delimiter: string;
    limit: number;
    snapshots: boolean;
    uncommitted: boolean;
    versions: boolean;
    deleted: boolean;
  },
  from: Position | undefined,
): Promise<Page> {
  const entries: ListEntry[] = [];
  const { prefix, delimiter, limit } = options;
  const nowMs = call.services.clock.nowMs();
  let cursor = from;
  for (;;) {
    const batch = await call.services.blobs.listBlobs(call.account, container, {
      prefix,
      from: cursor,
      limit: limit - entries.length + 1,
      snapshots: options.snapshots,
      uncommitted: options.uncommitted,
      versions: options.versions,
      deleted: options.deleted,
    });
    let folderSkipped = false;
    for (const listed of batch) {
      if (entries.length === limit) return { entries, next: positionOf(listed) };
      const name = listed.kind === 'blob' ? listed.record.name : listed.name;
      const cut = delimiter === '' ? -1 : name.indexOf(delimiter, prefix.length);
      if (cut !== -1) {
        const folder = name.slice(0, cut + delimiter.length);
        entries.push({ kind: 'prefix', name: folder });
        cursor = { name: pastFolder(folder), snapshot: '' };
        folderSkipped = true;
        break;
      }
      entries.push(
        listed.kind === 'blob' ? blobEntry(listed.record, nowMs) : { kind: 'uncommitted', name: listed.name },
      );
    }
    if (!folderSkipped) return { entries, next: undefined };
  }
}

/**
 * A blob's entry; a soft-deleted one (include=deleted) as it was, with its deletion. Chosen
 * (unverified): include=deleted shows soft-deleted snapshots and versions too, without
 * include=snapshots or include=versions.
 */
function blobEntry(record: BlobRecord, nowMs: number): ListEntry {
  const state = decodeBlobState(record.state);
  const deleted = softDeletedView(record, nowMs);
  if (deleted === undefined) return { kind: 'blob', record, state };
  const { deletedMs, remainingDays } = deleted;
  // A soft-deleted base blob is no version: no VersionId, not current.
  const shownState = deleted.record.snapshot === '' ? { ...state, versionId: undefined } : state;
  return { kind: 'blob', record: deleted.record, state: shownState, deleted: { deletedMs, remainingDays } };
}

/** 200 with EnumerationResults; NextMarker is empty on the last page. */
export async function listBlobs(call: BlobCall, container: string): Promise<Reply> {
  const { query } = call;
  const include = includeOf(query);
  const prefix = query.get('prefix') ?? undefined;
  const delimiter = query.get('delimiter') ?? undefined;
  const marker = query.get('marker') ?? undefined;
  const maxResults = integerParam(query, 'maxresults', { min: 1, max: int32Max });
  const from = marker === undefined || marker === '' ? undefined : decodeMarker(marker);
  if ((await call.services.blobs.getContainer(call.account, container)) === undefined) {
    throw new StorageError('ContainerNotFound');
  }
  const options = {
    prefix: prefix ?? '',
    delimiter: delimiter ?? '',
    limit: Math.min(maxResults ?? listBlobsPageMax, listBlobsPageMax),
    snapshots: include.has('snapshots'),
    uncommitted: include.has('uncommittedblobs'),
    versions: include.has('versions'),
    deleted: include.has('deleted'),
  };
  const page = await collect(call, container, options, from);
  const body = writeBlobListing({
    serviceEndpoint: `${call.baseUrl}/`,
    container,
    prefix,
    marker,
    maxResults,
    delimiter,
    entries: page.entries,
    withMetadata: include.has('metadata'),
    withCopy: include.has('copy'),
    withTags: include.has('tags'),
    nextMarker: page.next === undefined ? '' : encodeMarker(page.next),
    nowMs: call.services.clock.nowMs(),
  });
  return xmlReply(200, body);
}
