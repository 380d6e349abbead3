// Copy Blob within the account, done at once: the copy shares the source's content, no byte is
// copied (https://learn.microsoft.com/rest/api/storageservices/copy-blob, abort-copy-blob).
import { createHash, randomUUID } from 'node:crypto';
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import { metadataFromHeaders } from '../../http/metadata-headers.js';
import type { BlobKey, ContentChange } from '../../storage/blob-store.js';
import {
  findBlob,
  header,
  keyOf,
  nextRecord,
  nowMs,
  refuseSnapshot,
  requireBlob,
  requireContainer,
  updateBlob,
  writtenHeaders,
  type BlobCall,
  type BlobOf,
  type Found,
} from './access.js';
import { checkBlobName, checkWrite } from './checks.js';
import { isSnapshotStamp } from '../wire/etag.js';
import { totalSize } from '../state/block-lists.js';
import { parseDigestHeader } from '../content/checksums.js';
import { checkSourceConditions, parseConditions } from '../wire/conditions.js';
import { requireSourceReadable } from './copy-source-access.js';
import { noLease } from '../state/leases.js';
import { parseBlobResource } from '../resources.js';
import { sealOnCopy } from './seal.js';
import { copiedTier, priorityOf } from './tier.js';

/**
 * The blob x-ms-copy-source names, path-style (`…/{account}/{container}/{blob}`) or host-style
 * (`{account}.blob.…/{container}/{blob}`), with its `snapshot`. A source in another account or
 * outside this service is 400 CopyAcrossAccountsNotSupported: Cerulean copies only what it holds
 * (the service would fetch any URL, asynchronously).
 */
export function copySourceKey(source: string, account: string): BlobKey {
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    throw invalidHeaderValue('x-ms-copy-source', source);
  }
  const hostStyle = url.hostname.split('.')[0] === account && url.hostname.includes('.blob.');
  let path = url.pathname.slice(1);
  if (!hostStyle) {
    const slash = path.indexOf('/');
    if (slash === -1 || path.slice(0, slash) !== account) throw new StorageError('CopyAcrossAccountsNotSupported');
    path = path.slice(slash + 1);
  }
  const resource = parseBlobResource(path);
  if (resource.kind !== 'blob') throw invalidHeaderValue('x-ms-copy-source', source);
  const snapshot = url.searchParams.get('snapshot') ?? '';
  if (snapshot !== '' && !isSnapshotStamp(snapshot)) {
    throw invalidHeaderValue('x-ms-copy-source', source);
  }
  return { container: resource.container, name: resource.blob, snapshot };
}

/**
 * The MD5 of a source version's content, streamed through the hash (Copy Blob From URL's
 * x-ms-source-content-md5 is checked against the content, not against a stored property).
 */
async function contentMd5(call: BlobCall, source: Found): Promise<Buffer> {
  const { record } = source;
  const stream = await call.services.blobs.readContent(call.account, record, record.etag, 0, record.sizeBytes);
  // Chosen: a source replaced while it is hashed is reported, not hashed again.
  if (stream === 'changed')
    throw new StorageError('CannotVerifyCopySource', 'The copy source changed while it was read.');
  const hash = createHash('md5');
  for await (const chunk of stream) hash.update(chunk);
  return hash.digest();
}

/**
 * 202 Accepted with x-ms-copy-status: success and x-ms-copy-id; the copy is complete when it
 * answers. x-ms-source-content-md5 (copy-blob-from-url, the synchronous copy) is verified against
 * the source's content (400 Md5Mismatch) and answered as Content-MD5; Cerulean verifies it on any
 * copy, all of them being synchronous.
 */
export async function copyBlob(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  checkBlobName(resource.blob);
  const sourceText = header(call, 'x-ms-copy-source')!;
  const sourceKey = copySourceKey(sourceText, call.account);
  const sourceMd5 = parseDigestHeader(header(call, 'x-ms-source-content-md5'), 16, 'InvalidMd5');
  const requested = metadataFromHeaders(call.rawHeaders);
  const conditions = parseConditions(call.headers);
  const sourceConditions = parseConditions(call.headers, 'x-ms-source-');
  priorityOf(call); // checked before anything is read
  const ontoItself =
    sourceKey.snapshot === '' && sourceKey.container === resource.container && sourceKey.name === resource.blob;
  // Before anything is looked up, so that a source the request may not read is not revealed to exist.
  await requireSourceReadable(call, sourceText, sourceKey);
  await requireContainer(call, resource.container);
  const copyId = randomUUID();
  const record = await updateBlob(call, resource, async (current) => {
    checkWrite(call, conditions, current, true);
    const source = await findBlob(call, sourceKey);
    if (source === undefined) throw new StorageError('CannotVerifyCopySource');
    checkSourceConditions(sourceConditions, source.record);
    if (sourceMd5 !== undefined && !sourceMd5.equals(await contentMd5(call, source))) {
      throw new StorageError('Md5Mismatch');
    }
    // A page blob's pages are copied as its page table, sharing the content (page-store.ts).
    const pageBlob = source.state.blobType === 'PageBlob';
    const blocks = pageBlob ? [] : (await call.services.blobs.getBlocks(call.account, sourceKey)).committed;
    const sizeBytes = pageBlob ? source.record.sizeBytes : totalSize(blocks);
    const state = {
      ...source.state,
      createdMs: current?.state.createdMs ?? nowMs(call),
      metadata: requested.size > 0 ? [...requested] : source.state.metadata,
      lease: current?.state.lease ?? noLease,
      copy: { id: copyId, source: sourceText, completedMs: nowMs(call), sizeBytes },
      tier: copiedTier(call, source, ontoItself),
      sealed: sealOnCopy(call, source),
    };
    const next = nextRecord(call, resource, state, sizeBytes);
    const content: ContentChange = pageBlob
      ? { kind: 'pages', change: { kind: 'copy', source: sourceKey, sourceEtag: source.record.etag } }
      : { kind: 'replace', blocks };
    return { record: next, content };
  });
  return {
    status: 202,
    headers: {
      ...writtenHeaders(record),
      ...(sourceMd5 && { 'Content-MD5': sourceMd5.toString('base64') }),
      'x-ms-copy-id': copyId,
      'x-ms-copy-status': 'success',
    },
  };
}

/** Every copy is finished when Copy Blob answers, so there is never one to abort: 409 NoPendingCopyOperation. */
export async function abortCopyBlob(call: BlobCall, resource: BlobOf): Promise<Reply> {
  if (call.query.get('copyid') === null) {
    throw new StorageError('MissingRequiredQueryParameter', 'The query parameter copyid is required.');
  }
  await requireBlob(call, keyOf(resource));
  throw new StorageError('NoPendingCopyOperation');
}
