// List Blobs' response body (https://learn.microsoft.com/rest/api/storageservices/list-blobs):
// EnumerationResults with Blob and BlobPrefix entries, properties in the order the service writes
// them. Pure: records in, text out.
import { escapeXmlText, writeXmlNode, type XmlNode } from '../../wire/xml.js';
import { unquotedEtag } from './etag.js';
import { echoNodes, type ListingEcho } from './xml.js';
import { defaultType, type BlobState } from '../state/blob.js';
import { leaseView } from '../state/container.js';
import { httpDate } from './reply-headers.js';
import { tierNodes } from './tier.js';
import type { BlobRecord } from '../../storage/blob-store.js';
import { versionOf } from '../state/version.js';

export type ListEntry =
  | {
      readonly kind: 'blob';
      readonly record: BlobRecord;
      readonly state: BlobState;
      /** Soft-deleted (include=deleted): when, and the whole days left before it is purged. */
      readonly deleted?: { readonly deletedMs: number; readonly remainingDays: number } | undefined;
      /** include=deletedwithversions: a deleted blob that has versions, shown once by its name. */
      readonly hasVersionsOnly?: boolean | undefined;
    }
  | { readonly kind: 'uncommitted'; readonly name: string }
  | { readonly kind: 'prefix'; readonly name: string };

export interface BlobListing extends ListingEcho {
  /** e.g. http://127.0.0.1:10000/devstoreaccount1/ */
  readonly serviceEndpoint: string;
  readonly container: string;
  /** Echoed, after MaxResults, only when the request gave it. */
  readonly delimiter?: string | undefined;
  readonly entries: readonly ListEntry[];
  readonly withMetadata: boolean;
  readonly withCopy: boolean;
  /** include=tags: each blob's <Tags> after its Metadata. */
  readonly withTags: boolean;
  /** '' when this page is the last. */
  readonly nextMarker: string;
  readonly nowMs: number;
}

/**
 * What makes a name Encoded: what XML cannot carry, and a carriage return, which XML readers turn into
 * a line feed (the JS SDK's does, and it does not decode `&#xD;`). Chosen (unverified): the docs name
 * only U+FFFE and U+FFFF; encoding more is harmless to clients, which all decode Encoded names.
 */
const encodedNameCharacter = /[^\t\n\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/**
 * A blob's or folder's `<Name>`. A name holding a character XML cannot carry (U+FFFE, U+FFFF, most
 * control characters; all valid in blob names) is written `<Name Encoded="true">` with the name
 * percent-encoded as UTF-8, which the SDKs decode (the JS SDK's list deserializer applies
 * decodeURIComponent when Encoded is true). Any other name is written as text.
 */
export function writeNameElement(name: string): string {
  if (encodedNameCharacter.test(name)) return `<Name Encoded="true">${encodeURIComponent(name)}</Name>`;
  return `<Name>${escapeXmlText(name)}</Name>`;
}

export function writeBlobListing(listing: BlobListing): string {
  const echoed = echoNodes(listing);
  if (listing.delimiter !== undefined) echoed.push({ name: 'Delimiter', content: listing.delimiter });
  const blobs = `<Blobs>${listing.entries.map((entry) => writeEntry(entry, listing)).join('')}</Blobs>`;
  const body = echoed.map(writeXmlNode).join('') + blobs + writeXmlNode(leaf('NextMarker', listing.nextMarker));
  const attributes =
    `ServiceEndpoint="${escapeXmlText(listing.serviceEndpoint)}" ` +
    `ContainerName="${escapeXmlText(listing.container)}"`;
  return `<?xml version="1.0" encoding="utf-8"?><EnumerationResults ${attributes}>${body}</EnumerationResults>`;
}

function writeEntry(entry: ListEntry, listing: BlobListing): string {
  if (entry.kind === 'prefix') return `<BlobPrefix>${writeNameElement(entry.name)}</BlobPrefix>`;
  const name = entry.kind === 'blob' ? entry.record.name : entry.name;
  const rest = entryNodes(entry, listing).map(writeXmlNode).join('');
  return `<Blob>${writeNameElement(name)}${rest}</Blob>`;
}

/** A Blob entry's elements after its Name. */
function entryNodes(entry: Exclude<ListEntry, { kind: 'prefix' }>, listing: BlobListing): XmlNode[] {
  if (entry.kind === 'uncommitted') {
    // Chosen (unverified): a name with only staged blocks lists as an empty block blob with no dates or ETag.
    const properties: XmlNode[] = [
      { name: 'Content-Length', content: '0' },
      { name: 'BlobType', content: 'BlockBlob' },
      { name: 'LeaseStatus', content: 'unlocked' },
      { name: 'LeaseState', content: 'available' },
      { name: 'ServerEncrypted', content: 'true' },
    ];
    return [{ name: 'Properties', content: properties }];
  }
  const { record, state, deleted } = entry;
  const content: XmlNode[] = [];
  if (deleted !== undefined) content.push({ name: 'Deleted', content: 'true' });
  const version = versionOf(record, state);
  if (record.snapshot !== '' && version === undefined) content.push({ name: 'Snapshot', content: record.snapshot });
  if (version !== undefined) content.push({ name: 'VersionId', content: version.id });
  if (version?.current === true) content.push({ name: 'IsCurrentVersion', content: 'true' });
  const properties = propertyNodes(record, state, listing);
  if (deleted !== undefined) {
    // Chosen (unverified): where the service puts them among the properties; the SDKs read them by name.
    properties.push(leaf('DeletedTime', httpDate(deleted.deletedMs)));
    properties.push(leaf('RemainingRetentionDays', String(deleted.remainingDays)));
  }
  content.push({ name: 'Properties', content: properties });
  if (listing.withMetadata) {
    content.push({ name: 'Metadata', content: state.metadata.map(([name, value]) => leaf(name, value)) });
  }
  const tags = state.tags ?? [];
  if (listing.withTags && tags.length > 0) {
    const tagNodes = tags.map(([key, value]): XmlNode => ({
      name: 'Tag',
      content: [leaf('Key', key), leaf('Value', value)],
    }));
    content.push({ name: 'Tags', content: [{ name: 'TagSet', content: tagNodes }] });
  }
  // Last, as the service's schema (list-blobs, 2020-10-02 on) places it; the SDKs read it by name.
  if (entry.hasVersionsOnly === true) content.push({ name: 'HasVersionsOnly', content: 'true' });
  return content;
}

/** An element with text, or `<Name />` when there is none, as the service writes empty properties. */
function leaf(name: string, value: string | undefined): XmlNode {
  return { name, content: value === undefined || value === '' ? [] : value };
}

function propertyNodes(record: BlobRecord, state: BlobState, listing: BlobListing): XmlNode[] {
  const h = state.headers;
  const lease = leaseView(record.snapshot === '' ? state.lease : undefined, listing.nowMs);
  const nodes: XmlNode[] = [
    leaf('Creation-Time', httpDate(state.createdMs)),
    leaf('Last-Modified', httpDate(record.lastModifiedMs)),
    leaf('Etag', unquotedEtag(record.etag)),
    leaf('Content-Length', String(record.sizeBytes)),
    leaf('Content-Type', h.contentType ?? defaultType),
    leaf('Content-Encoding', h.contentEncoding),
    leaf('Content-Language', h.contentLanguage),
    leaf('Content-MD5', h.contentMd5),
    leaf('Content-Disposition', h.contentDisposition),
    leaf('Cache-Control', h.cacheControl),
    // list-blobs puts a page blob's sequence number before BlobType.
    ...(state.blobType === 'PageBlob' ? [leaf('x-ms-blob-sequence-number', String(state.sequenceNumber ?? 0))] : []),
    leaf('BlobType', state.blobType),
    ...(state.blobType === 'BlockBlob' ? tierNodes(state.tier, listing.nowMs) : []),
    leaf('LeaseStatus', lease.status),
    leaf('LeaseState', lease.state),
  ];
  if (lease.duration !== undefined) nodes.push(leaf('LeaseDuration', lease.duration));
  // list-blobs: TagCount, when the blob has tags (whatever include asks).
  if (state.tags !== undefined && state.tags.length > 0) nodes.push(leaf('TagCount', String(state.tags.length)));
  if (listing.withCopy && state.copy !== undefined) {
    const { copy } = state;
    nodes.push(
      leaf('CopyId', copy.id),
      leaf('CopyStatus', 'success'),
      leaf('CopySource', copy.source),
      leaf('CopyProgress', `${copy.sizeBytes}/${copy.sizeBytes}`),
      leaf('CopyCompletionTime', httpDate(copy.completedMs)),
    );
  }
  nodes.push(leaf('ServerEncrypted', 'true'));
  // Chosen (unverified): where the service puts Sealed; the SDKs read it by name.
  if (state.sealed === true) nodes.push(leaf('Sealed', 'true'));
  return nodes;
}
