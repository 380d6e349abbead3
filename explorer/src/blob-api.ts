// The explorer's client of the Blob service (https://learn.microsoft.com/rest/api/storageservices/blob-service-rest-api):
// containers, blobs listed a folder at a time, upload (one Put Blob, or blocks and a block list
// for a large file), download, properties and metadata, and service SAS URLs for one blob.
import { appendXml, childText, hmacBase64, type Credentials } from './api.js';
import { serviceCall, serviceUrl } from './service-call.js';

/** Files up to this size go up in one Put Blob; larger ones in blocks of blockBytes. */
export const singlePutBytesMax = 8 * 1024 * 1024;
export const blockBytes = 4 * 1024 * 1024;
/** The service SAS format the explorer writes (create-service-sas, with the encryption scope field). */
export const blobSasVersion = '2020-12-06';

export interface ListPage<T> {
  readonly items: T[];
  readonly nextMarker: string | undefined;
}

export interface BlobItem {
  readonly name: string;
  readonly sizeBytes: number;
  readonly contentType: string;
  readonly lastModified: string;
  /** List Blobs' AccessTier ('' for blobs without one: append blobs), AccessTierInferred, ArchiveStatus. */
  readonly accessTier: string;
  readonly accessTierInferred: boolean;
  readonly archiveStatus: string;
  /** BlockBlob, AppendBlob or PageBlob, as List Blobs names it. */
  readonly blobType: string;
  /** A soft-deleted blob (listed with include=deleted): its DeletedTime and RemainingRetentionDays. */
  readonly deleted: boolean;
  readonly deletedTime: string;
  readonly remainingRetentionDays: string;
  /** A Data Lake directory: the metadata hdi_isfolder=true (docs/datalake.md). */
  readonly directory: boolean;
}

export interface FolderPage {
  /** The folders (BlobPrefix names, ending in '/') directly under the prefix. */
  readonly folders: string[];
  readonly blobs: BlobItem[];
  readonly nextMarker: string | undefined;
}

export interface BlobProperties {
  /** Every response header of Get Blob Properties but the metadata, by lower-case name. */
  readonly headers: [string, string][];
  readonly metadata: [string, string][];
}

const containerPath = (container: string): string => `/${encodeURIComponent(container)}`;

/** `/{container}/{blob}` with each segment of the blob name percent-encoded, '/' kept. */
export function blobPath(container: string, blob: string): string {
  return `${containerPath(container)}/${blob.split('/').map(encodeURIComponent).join('/')}`;
}

function parseXml(text: string): XMLDocument {
  return new DOMParser().parseFromString(text, 'application/xml');
}

function nextMarkerOf(xml: XMLDocument): string | undefined {
  const marker = childText(xml.documentElement, 'NextMarker');
  return marker === '' ? undefined : marker;
}

export async function listContainers(
  credentials: Credentials,
  prefix: string,
  marker: string | undefined,
  pageSizeMax: number,
): Promise<ListPage<string>> {
  const response = await serviceCall('blob', credentials, {
    method: 'GET',
    path: '',
    query: { comp: 'list', prefix, marker, maxresults: String(pageSizeMax) },
  });
  const xml = parseXml(await response.text());
  const items = [...xml.getElementsByTagName('Container')].map((container) => childText(container, 'Name'));
  return { items, nextMarker: nextMarkerOf(xml) };
}

export async function createContainer(credentials: Credentials, container: string): Promise<void> {
  await serviceCall('blob', credentials, {
    method: 'PUT',
    path: containerPath(container),
    query: { restype: 'container' },
  });
}

export async function deleteContainer(credentials: Credentials, container: string): Promise<void> {
  await serviceCall('blob', credentials, {
    method: 'DELETE',
    path: containerPath(container),
    query: { restype: 'container' },
  });
}

/**
 * One page of List Blobs under `prefix` with delimiter '/': the folders and blobs of one level;
 * with `withDeleted`, soft-deleted blobs too (include=deleted). Snapshots and soft-deleted previous
 * versions that include=deleted may list are left out: the folder shows blobs. Metadata is always
 * asked for, to know Data Lake directories (hdi_isfolder=true).
 */
export async function listFolder(
  credentials: Credentials,
  container: string,
  prefix: string,
  marker: string | undefined,
  pageSizeMax: number,
  withDeleted = false,
): Promise<FolderPage> {
  const response = await serviceCall('blob', credentials, {
    method: 'GET',
    path: containerPath(container),
    query: {
      restype: 'container',
      comp: 'list',
      prefix,
      delimiter: '/',
      marker,
      maxresults: String(pageSizeMax),
      include: withDeleted ? 'metadata,deleted' : 'metadata',
    },
  });
  const xml = parseXml(await response.text());
  const folders = [...xml.getElementsByTagName('BlobPrefix')].map((folder) => childText(folder, 'Name'));
  const isBlob = (entry: Element): boolean =>
    childText(entry, 'Snapshot') === '' &&
    (childText(entry, 'Deleted') !== 'true' || childText(entry, 'VersionId') === '');
  const blobs = [...xml.getElementsByTagName('Blob')].filter(isBlob).map((blob) => ({
    name: childText(blob, 'Name'),
    sizeBytes: Number(childText(blob, 'Content-Length')),
    contentType: childText(blob, 'Content-Type'),
    lastModified: childText(blob, 'Last-Modified'),
    accessTier: childText(blob, 'AccessTier'),
    accessTierInferred: childText(blob, 'AccessTierInferred') === 'true',
    archiveStatus: childText(blob, 'ArchiveStatus'),
    blobType: childText(blob, 'BlobType'),
    deleted: childText(blob, 'Deleted') === 'true',
    deletedTime: childText(blob, 'DeletedTime'),
    remainingRetentionDays: childText(blob, 'RemainingRetentionDays'),
    directory: isFolderMarker(blob),
  }));
  return { folders, blobs, nextMarker: nextMarkerOf(xml) };
}

/** Whether a listed blob's metadata says hdi_isfolder=true (the name's case as written). */
function isFolderMarker(blob: Element): boolean {
  const metadata = blob.getElementsByTagName('Metadata')[0];
  if (metadata === undefined) return false;
  return [...metadata.children].some(
    (item) => item.tagName.toLowerCase() === 'hdi_isfolder' && item.textContent === 'true',
  );
}

/**
 * Uploads a file as a block blob: one Put Blob up to singlePutBytesMax, else Put Block for every
 * blockBytes and one Put Block List. `progress` hears the bytes sent so far.
 */
export async function uploadBlob(
  credentials: Credentials,
  container: string,
  blob: string,
  file: Blob,
  progress: (sentBytes: number) => void,
): Promise<void> {
  const contentType = file.type === '' ? 'application/octet-stream' : file.type;
  const path = blobPath(container, blob);
  if (file.size <= singlePutBytesMax) {
    const headers = { 'Content-Type': contentType, 'x-ms-blob-type': 'BlockBlob' };
    await serviceCall('blob', credentials, { method: 'PUT', path, headers, body: file });
    progress(file.size);
    return;
  }
  const ids: string[] = [];
  for (let offset = 0; offset < file.size; offset += blockBytes) {
    // Block ids of one blob must have one length: a fixed-width number, base64.
    const id = btoa(`block-${String(ids.length).padStart(6, '0')}`);
    ids.push(id);
    const body = file.slice(offset, offset + blockBytes);
    const headers = { 'Content-Type': 'application/octet-stream' };
    await serviceCall('blob', credentials, {
      method: 'PUT',
      path,
      query: { comp: 'block', blockid: id },
      headers,
      body,
    });
    progress(Math.min(offset + blockBytes, file.size));
  }
  const xml = document.implementation.createDocument(null, 'BlockList', null);
  for (const id of ids) appendXml(xml.documentElement, 'Latest', id);
  await serviceCall('blob', credentials, {
    method: 'PUT',
    path,
    query: { comp: 'blocklist' },
    headers: { 'Content-Type': 'application/xml', 'x-ms-blob-content-type': contentType },
    body: `<?xml version="1.0" encoding="utf-8"?>${new XMLSerializer().serializeToString(xml.documentElement)}`,
  });
}

export async function downloadBlob(credentials: Credentials, container: string, blob: string): Promise<Blob> {
  const response = await serviceCall('blob', credentials, { method: 'GET', path: blobPath(container, blob) });
  return response.blob();
}

export async function deleteBlob(credentials: Credentials, container: string, blob: string): Promise<void> {
  await serviceCall('blob', credentials, { method: 'DELETE', path: blobPath(container, blob) });
}

/** Undelete Blob: restores the soft-deleted blob (and its soft-deleted snapshots) of the name. */
export async function undeleteBlob(credentials: Credentials, container: string, blob: string): Promise<void> {
  const path = blobPath(container, blob);
  await serviceCall('blob', credentials, { method: 'PUT', path, query: { comp: 'undelete' } });
}

/** Response headers about the exchange, not the blob: left out of its properties. */
const transportHeaders: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'date',
  'server',
  'vary',
  'x-ms-request-id',
  'x-ms-client-request-id',
  'x-ms-version',
  'x-content-type-options',
]);

/** Get Blob Properties: its system properties and its metadata (x-ms-meta-*). */
export async function blobProperties(
  credentials: Credentials,
  container: string,
  blob: string,
): Promise<BlobProperties> {
  const response = await serviceCall('blob', credentials, { method: 'HEAD', path: blobPath(container, blob) });
  const headers: [string, string][] = [];
  const metadata: [string, string][] = [];
  for (const [name, value] of response.headers) {
    if (name.startsWith('x-ms-meta-')) metadata.push([name.slice('x-ms-meta-'.length), value]);
    else if (!transportHeaders.has(name) && !name.startsWith('access-control-')) headers.push([name, value]);
  }
  return { headers, metadata };
}

/** Set Blob Tier: the status, 200 (done) or 202 (an archived blob rehydrating). */
export async function setBlobTier(credentials: Credentials, container: string, blob: string, tier: string) {
  const path = blobPath(container, blob);
  const headers = { 'x-ms-access-tier': tier };
  const response = await serviceCall('blob', credentials, { method: 'PUT', path, query: { comp: 'tier' }, headers });
  return response.status;
}

/** Set Blob Metadata: replaces all of it. Names must be C# identifiers; values ASCII. */
export async function setBlobMetadata(
  credentials: Credentials,
  container: string,
  blob: string,
  metadata: readonly [string, string][],
): Promise<void> {
  const headers = Object.fromEntries(metadata.map(([name, value]) => [`x-ms-meta-${name}`, value]));
  await serviceCall('blob', credentials, {
    method: 'PUT',
    path: blobPath(container, blob),
    query: { comp: 'metadata' },
    headers,
  });
}

/** What a blob or container service SAS grants: fields left '' are not signed (st: from now; si: no policy). */
export interface BlobSasRequest {
  readonly container: string;
  /** The blob (sr=b); undefined for the whole container (sr=c). */
  readonly blob?: string;
  /** Letters of r, a, c, w, d (and l for a container), in that order. */
  readonly permissions: string;
  readonly start: string;
  readonly expiry: string;
  readonly policyId: string;
}

/**
 * A service SAS URL for one blob or one container (https://learn.microsoft.com/rest/api/storageservices/create-service-sas,
 * version 2020-12-06).
 */
export async function blobServiceSasUrl(credentials: Credentials, request: BlobSasRequest): Promise<string> {
  const { container, blob } = request;
  const resource = blob === undefined ? 'c' : 'b';
  const fields = [
    request.permissions,
    request.start,
    request.expiry,
    `/blob/${credentials.account}/${container}${blob === undefined ? '' : `/${blob}`}`,
    request.policyId,
    '', // sip: any address
    '', // spr: http and https (the local server speaks http)
    blobSasVersion,
    resource,
    '', // snapshot time
    '', // encryption scope
    '', // rscc, rscd, rsce, rscl, rsct: the blob's own headers
    '',
    '',
    '',
    '',
  ];
  const sig = await hmacBase64(credentials.key, fields.join('\n'));
  const path = blob === undefined ? containerPath(container) : blobPath(container, blob);
  const url = serviceUrl('blob', credentials.account, { method: 'GET', path });
  const params = {
    sv: blobSasVersion,
    sr: resource,
    sp: request.permissions,
    st: request.start,
    se: request.expiry,
    si: request.policyId,
    sig,
  };
  url.search = Object.entries(params)
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join('&');
  return url.toString();
}

/** A service SAS URL for one blob: `permissions` of r, a, c, w, d in that order, valid until `expiry` (ISO 8601). */
export function blobSasUrl(
  credentials: Credentials,
  container: string,
  blob: string,
  permissions: string,
  expiry: string,
): Promise<string> {
  return blobServiceSasUrl(credentials, { container, blob, permissions, start: '', expiry, policyId: '' });
}
