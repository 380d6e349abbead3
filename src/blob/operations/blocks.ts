// Put Block, Put Block From URL, Put Block List and Get Block List
// (https://learn.microsoft.com/rest/api/storageservices/put-block, put-block-from-url, put-block-list,
// get-block-list).
import { createHash } from 'node:crypto';
import { invalidQueryParameter, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import { decodeUtf8 } from '../../http/body.js';
import { metadataFromHeaders } from '../../http/metadata-headers.js';
import {
  findBlob,
  header,
  keyOf,
  leaseIdOf,
  newContentState,
  nextRecord,
  notFound,
  nowMs,
  refuseSnapshot,
  requireContainer,
  snapshotOf,
  updateBlob,
  writeFailure,
  writtenHeaders,
  type BlobCall,
  type BlobOf,
  versioned,
} from './access.js';
import { versionIdHeader } from './versions.js';
import { checkBlobName, checkWrite, refuseOverwrite } from './checks.js';
import { checksumReplyHeaders, contentHeadersOf, receiveContent, receiveSmallBody, type Received } from './content.js';
import { copyRange, sourceBlob, sourceRange } from './from-url.js';
import { visibleEtag } from '../wire/etag.js';
import { httpDate } from '../wire/reply-headers.js';
import { blockBytesMax, blockListBodyBytesMax, stagedBlocksMax } from '../limits.js';
import { parseBlockList, writeBlockList } from '../wire/block-list-xml.js';
import { checkBlockId, resolveBlockList, totalSize } from '../state/block-lists.js';
import { parseDigestHeader } from '../content/checksums.js';
import { evaluate, parseConditions } from '../wire/conditions.js';
import { checkLeaseForRead, checkLeaseForWrite } from '../state/leases.js';
import { requestedTier } from './tier.js';
import { requestTags } from './tags.js';

/** 201 Created: the block is staged under the blob's name (the blob need not exist yet). */
export async function putBlock(call: BlobCall, resource: BlobOf): Promise<Reply> {
  return stageBlockOf(call, resource, () => receiveContent(call, blockBytesMax, true));
}

/**
 * Put Block From URL (put-block-from-url): the block is the source's bytes in x-ms-source-range
 * (all of it when absent), up to Put Block's limit; otherwise as Put Block. The source is checked
 * after the destination's own checks, and read only then.
 */
export async function putBlockFromUrl(call: BlobCall, resource: BlobOf): Promise<Reply> {
  return stageBlockOf(call, resource, async () => {
    const source = await sourceBlob(call);
    return copyRange(call, source, sourceRange(call, source.found.record.sizeBytes), blockBytesMax);
  });
}

/** Checks the block id and the blob, then stages what `receive` writes. */
async function stageBlockOf(call: BlobCall, resource: BlobOf, receive: () => Promise<Received>): Promise<Reply> {
  refuseSnapshot(call);
  checkBlobName(resource.blob);
  const blockId = call.query.get('blockid');
  if (blockId === null)
    throw new StorageError('MissingRequiredQueryParameter', 'The query parameter blockid is required.');
  // A blob found is in its container: only a blob not found needs the container looked up.
  const current = await findBlob(call, keyOf(resource));
  if (current === undefined) await requireContainer(call, resource.container);
  else {
    // Staging for a blob that exists is a step towards replacing it (not checked again at staging time:
    // Put Block List, which replaces, checks under its compare-and-swap).
    refuseOverwrite(call, current);
    if (current.state.blobType !== 'BlockBlob') throw new StorageError('InvalidBlobType');
    checkLeaseForWrite(current.state.lease, nowMs(call), leaseIdOf(call), 'blob');
  }
  // A summary, not the block lists: a blob with many staged blocks costs no more per Put Block.
  const summary = await call.services.blobs.blockSummary(call.account, resource.container, resource.blob, blockId);
  checkBlockId(blockId, summary.sampleBlockId);
  if (summary.stagedCount >= stagedBlocksMax && !summary.stagedHasId) {
    throw new StorageError('BlockCountExceedsLimit', 'The uncommitted block count cannot exceed 100,000 blocks.');
  }
  const received = await receive();
  const outcome = await call.services.blobs.stageBlock(call.account, resource.container, resource.blob, {
    blockId,
    content: received.content,
  });
  if (outcome !== 'ok') throw writeFailure(outcome);
  // The service answers the MD5 it computed (put-block), sent or not.
  return { status: 201, headers: { 'x-ms-request-server-encrypted': 'true', ...checksumReplyHeaders(received) } };
}

/** 201 Created: the blob becomes the named blocks, in order; staged blocks not named are dropped. */
export async function putBlockList(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  checkBlobName(resource.blob);
  const body = await receiveSmallBody(call, blockListBodyBytesMax);
  // Content-MD5 here is the body's (transactional), checked like any other request content's.
  const bodyMd5 = parseDigestHeader(header(call, 'content-md5'), 16, 'InvalidMd5');
  if (bodyMd5 !== undefined && !bodyMd5.equals(createHash('md5').update(body).digest())) {
    throw new StorageError('Md5Mismatch');
  }
  const entries = parseBlockList(decodeXml(body));
  const metadata = [...metadataFromHeaders(call.rawHeaders)];
  const headers = contentHeadersOf(call, false, undefined);
  const conditions = parseConditions(call.headers);
  const tier = requestedTier(call, 'BlockBlob');
  const tags = requestTags(call);
  await requireContainer(call, resource.container);
  const record = await updateBlob(call, resource, async (current) => {
    if (current !== undefined && current.state.blobType !== 'BlockBlob') throw new StorageError('InvalidBlobType');
    checkWrite(call, conditions, current, true);
    const { committed, staged } = await call.services.blobs.getBlocks(call.account, keyOf(resource));
    const blocks = resolveBlockList(entries, committed, staged);
    const state = { ...newContentState(call, current, 'BlockBlob', headers, metadata), tier, tags };
    const next = nextRecord(call, resource, state, totalSize(blocks));
    return { record: next, content: { kind: 'replace' as const, blocks }, makesVersion: true, overwrites: true };
  });
  return { status: 201, headers: { ...writtenHeaders(record), ...versionIdHeader(record) } };
}

function decodeXml(body: Buffer): string {
  try {
    return decodeUtf8(body);
  } catch {
    throw new StorageError('InvalidXmlDocument', 'The request body is not valid UTF-8.');
  }
}

/** 200 with the committed and/or uncommitted blocks (blocklisttype: committed, the default; uncommitted; all). */
export async function getBlockList(call: BlobCall, resource: BlobOf): Promise<Reply> {
  const snapshot = snapshotOf(call);
  const listTypeText = call.query.get('blocklisttype') ?? 'committed';
  const listType = listTypeText.toLowerCase();
  if (!['committed', 'uncommitted', 'all'].includes(listType)) {
    throw invalidQueryParameter('blocklisttype', listTypeText, 'The value must be committed, uncommitted or all.');
  }
  const found = await findBlob(call, keyOf(resource, snapshot));
  if (found !== undefined) {
    if (evaluate(parseConditions(call.headers), versioned(found)) !== 'ok') throw new StorageError('ConditionNotMet');
    if (snapshot === '') checkLeaseForRead(found.state.lease, nowMs(call), leaseIdOf(call));
  }
  const { committed, staged } = await call.services.blobs.getBlocks(call.account, keyOf(resource, snapshot));
  if (found === undefined && staged.length === 0) return notFound(call, resource.container);
  const listed = (blocks: typeof committed) =>
    blocks.filter((b) => b.blockId !== '').map((b) => ({ blockId: b.blockId, sizeBytes: b.content.sizeBytes }));
  const body = writeBlockList(
    listType === 'uncommitted' ? undefined : listed(found === undefined ? [] : committed),
    listType === 'committed' ? undefined : listed(staged),
  );
  const headers: Record<string, string> = { 'Content-Type': 'application/xml' };
  if (found !== undefined) {
    headers['ETag'] = visibleEtag(found.record.etag);
    headers['Last-Modified'] = httpDate(found.record.lastModifiedMs);
    headers['x-ms-blob-content-length'] = String(found.record.sizeBytes);
  }
  return { status: 200, headers, body };
}
