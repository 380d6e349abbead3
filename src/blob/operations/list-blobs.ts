// List Blobs (https://learn.microsoft.com/rest/api/storageservices/list-blobs): a page of a
// container's blobs in name order, with virtual folders (BlobPrefix) when a delimiter is given.
// A folder counts as one result and is stepped over with one query from just past its names, so a
// folder holding millions of blobs costs no more than one holding one.
import { invalidQueryParameter, StorageError } from '../../errors.js';
import { int32Max, integerParam } from '../../http/query-params.js';
import type { Reply } from '../../http/respond.js';
import { versionIdOfKey, versionKeyPrefix, type BlobRecord, type ListedBlob } from '../../storage/blob-store.js';
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
  'deletedwithversions',
  // No immutability or legal holds in Cerulean: nothing to add for them.
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
    deletedWithVersions: boolean;
  },
  from: Position | undefined,
): Promise<Page> {
  const entries: ListEntry[] = [];
  const { prefix, delimiter, limit } = options;
  const nowMs = call.services.clock.nowMs();
  const versionsOnly = new VersionsOnly(call, container, options.versions, from);
  let cursor = from;
  for (;;) {
    const batch = await call.services.blobs.listBlobs(call.account, container, {
      prefix,
      from: cursor,
      limit: limit - entries.length + 1,
      snapshots: options.snapshots,
      uncommitted: options.uncommitted,
      versions: options.versions || options.deletedWithVersions,
      deleted: options.deleted,
    });
    let skipped = false;
    for (const listed of batch) {
      if (entries.length === limit) return { entries, next: positionOf(listed) };
      const name = listed.kind === 'blob' ? listed.record.name : listed.name;
      const cut = delimiter === '' ? -1 : name.indexOf(delimiter, prefix.length);
      if (cut !== -1) {
        const folder = name.slice(0, cut + delimiter.length);
        entries.push({ kind: 'prefix', name: folder });
        cursor = { name: pastFolder(folder), snapshot: '' };
        skipped = true;
        break;
      }
      if (listed.kind === 'blob' && versionIdOfKey(listed.record.snapshot) !== undefined) {
        const shown = options.deletedWithVersions ? await versionsOnly.entryBefore(listed.record) : undefined;
        if (shown !== undefined) entries.push(shown);
        if (!options.versions) {
          // Its versions are not listed: step over all of them with one query.
          cursor = { name, snapshot: pastVersions };
          skipped = true;
          break;
        }
        if (shown !== undefined && entries.length === limit) return { entries, next: { name, snapshot: shownMark } };
      }
      versionsOnly.passed(positionOf(listed));
      entries.push(
        listed.kind === 'blob' ? blobEntry(listed.record, nowMs) : { kind: 'uncommitted', name: listed.name },
      );
    }
    if (!skipped) return { entries, next: undefined };
    versionsOnly.passed(undefined);
  }
}

/** Above every version key of a name ('v' + id) and below its soft-deleted keys ('x'). */
const pastVersions = String.fromCharCode(versionKeyPrefix.charCodeAt(0) + 1);
/**
 * A marker position no row has (version keys are longer): the page ended just after the name's
 * HasVersionsOnly entry, so the next page starts at the name's first version without showing it again.
 */
const shownMark = versionKeyPrefix;

/**
 * include=deletedwithversions (list-blobs, 2020-10-02 on): a name with previous versions and no
 * current blob (deleted with versioning on) is listed once by its name with <HasVersionsOnly>, just
 * before its first version (where its versions are listed too, include=versions). Chosen
 * (unverified): that entry shows the properties of the name's oldest previous version, without a
 * VersionId. Deciding costs one read of the base blob per such name, and (when a page starts at a
 * version) one read of the name's first version.
 */
class VersionsOnly {
  /** The row listed (or stepped over) just before, in this request; undefined after a jump. */
  private previous: Position | undefined;

  constructor(
    private readonly call: BlobCall,
    private readonly container: string,
    private readonly versions: boolean,
    private readonly from: Position | undefined,
  ) {}

  passed(position: Position | undefined): void {
    this.previous = position;
  }

  /** The HasVersionsOnly entry to list before the version `record`, if it is the first of a deleted blob. */
  async entryBefore(record: BlobRecord): Promise<ListEntry | undefined> {
    const first = await this.isFirstVersion(record);
    this.passed({ name: record.name, snapshot: record.snapshot });
    if (!first) return undefined;
    const base = await this.call.services.blobs.getBlob(this.call.account, {
      container: this.container,
      name: record.name,
      snapshot: '',
    });
    if (base !== undefined) return undefined;
    const state = { ...decodeBlobState(record.state), versionId: undefined };
    return { kind: 'blob', record: { ...record, snapshot: '' }, state, hasVersionsOnly: true };
  }

  private async isFirstVersion(record: BlobRecord): Promise<boolean> {
    const previous = this.previous;
    if (previous !== undefined) {
      return previous.name !== record.name || versionIdOfKey(previous.snapshot) === undefined;
    }
    const from = this.from;
    if (from?.name === record.name && from.snapshot === shownMark) return false;
    if (!this.versions) return true; // versions are stepped over at once: a page starts at the first
    const [first] = await this.call.services.blobs.listBlobs(this.call.account, this.container, {
      prefix: record.name,
      from: { name: record.name, snapshot: versionKeyPrefix },
      limit: 1,
      snapshots: false,
      uncommitted: false,
      versions: true,
    });
    return first?.kind === 'blob' && first.record.name === record.name && first.record.snapshot === record.snapshot;
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
    deletedWithVersions: include.has('deletedwithversions'),
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
