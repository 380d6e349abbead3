// Copy Blob from any account of this server, done at once: the copy shares the source's content, no
// byte is copied (https://learn.microsoft.com/rest/api/storageservices/copy-blob, abort-copy-blob).
import { createHash, randomUUID } from 'node:crypto';
import { StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import { metadataFromHeaders } from '../../http/metadata-headers.js';
import type { ContentChange } from '../../storage/blob-store.js';
import {
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
import { versionIdHeader } from './versions.js';
import { totalSize } from '../state/block-lists.js';
import { parseDigestHeader } from '../content/checksums.js';
import { parseConditions } from '../wire/conditions.js';
import { requireCopySource, requireSourceReadable, resolveCopySource } from './copy-source-access.js';
import { copiesSourceTags, requestTags } from './tags.js';
import { noLease } from '../state/leases.js';
import { sealOnCopy } from './seal.js';
import { copiedTier, priorityOf } from './tier.js';

/**
 * The MD5 of a source version's content, streamed through the hash (Copy Blob From URL's
 * x-ms-source-content-md5 is checked against the content, not against a stored property).
 */
export async function contentMd5(call: BlobCall, account: string, source: Found): Promise<Buffer> {
  const { record } = source;
  const stream = await call.services.blobs.readContent(account, record, record.etag, 0, record.sizeBytes);
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
  const source = resolveCopySource(call, sourceText);
  const sourceKey = source.key;
  const sourceMd5 = parseDigestHeader(header(call, 'x-ms-source-content-md5'), 16, 'InvalidMd5');
  const requested = metadataFromHeaders(call.rawHeaders);
  const conditions = parseConditions(call.headers);
  const sourceConditions = parseConditions(call.headers, 'x-ms-source-');
  priorityOf(call); // checked before anything is read
  const tags = requestTags(call);
  const copySourceTags = copiesSourceTags(call);
  const ontoItself =
    source.account === call.account &&
    sourceKey.snapshot === '' &&
    sourceKey.container === resource.container &&
    sourceKey.name === resource.blob;
  // Before anything is looked up, so that a source the request may not read is not revealed to exist.
  await requireSourceReadable(call, source);
  await requireContainer(call, resource.container);
  const copyId = randomUUID();
  const record = await updateBlob(call, resource, async (current) => {
    checkWrite(call, conditions, current, true);
    const found = await requireCopySource(call, source, sourceConditions);
    if (sourceMd5 !== undefined && !sourceMd5.equals(await contentMd5(call, source.account, found))) {
      throw new StorageError('Md5Mismatch');
    }
    // Every account is in the one store, so the copy shares the source's content whatever its account;
    // a page blob's pages are copied as its page table (page-store.ts).
    const pageBlob = found.state.blobType === 'PageBlob';
    const blocks = pageBlob ? [] : (await call.services.blobs.getBlocks(source.account, found.record)).committed;
    const sizeBytes = pageBlob ? found.record.sizeBytes : totalSize(blocks);
    const state = {
      ...found.state,
      createdMs: current?.state.createdMs ?? nowMs(call),
      metadata: requested.size > 0 ? [...requested] : found.state.metadata,
      lease: current?.state.lease ?? noLease,
      copy: { id: copyId, source: sourceText, completedMs: nowMs(call), sizeBytes },
      tier: copiedTier(call, found, ontoItself),
      sealed: sealOnCopy(call, found),
      tags: copySourceTags ? found.state.tags : tags,
    };
    const next = nextRecord(call, resource, state, sizeBytes);
    const { container, name, snapshot, etag } = found.record;
    const pageCopy = {
      kind: 'copy',
      sourceAccount: source.account,
      source: { container, name, snapshot },
      sourceEtag: etag,
    } as const;
    const content: ContentChange = pageBlob ? { kind: 'pages', change: pageCopy } : { kind: 'replace', blocks };
    return { record: next, content, makesVersion: true, overwrites: true };
  });
  return {
    status: 202,
    headers: {
      ...writtenHeaders(record),
      ...versionIdHeader(record),
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
