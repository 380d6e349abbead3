// Put Blob From URL, and the source side of Put Block From URL and Append Block From URL: content
// taken from a blob of this server (any account) named by x-ms-copy-source instead of the body
// (https://learn.microsoft.com/rest/api/storageservices/put-blob-from-url, put-block-from-url,
// append-block-from-url). Read from the store directly: a whole source is shared by reference, a
// range is streamed into new content.
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import { metadataFromHeaders } from '../../http/metadata-headers.js';
import type { Block } from '../../storage/blob-store.js';
import {
  header,
  newContentState,
  nextRecord,
  refuseSnapshot,
  requireContainer,
  updateBlob,
  writtenHeaders,
  type BlobCall,
  type BlobOf,
  type Found,
} from './access.js';
import { checkBlobName, checkWrite } from './checks.js';
import type { Received } from './content.js';
import { contentMd5 } from './copy.js';
import { copiesSourceTags, requestTags } from './tags.js';
import { versionIdHeader } from './versions.js';
import {
  copySourceFailure,
  requireCopySource,
  requireSourceReadable,
  resolveCopySource,
  type CopySource,
} from './copy-source-access.js';
import { checkedContent, parseDigestHeader, type ContentSeen } from '../content/checksums.js';
import { putBlobBytesMax } from '../limits.js';
import { totalSize } from '../state/block-lists.js';
import type { ContentHeaders } from '../state/blob.js';
import { parseConditions } from '../wire/conditions.js';
import type { ResolvedRange } from '../wire/ranges.js';
import { requestedTier } from './tier.js';

/** The source a From-URL request names, readable by it, as it is now, its x-ms-source-if-* conditions met. */
export interface SourceBlob {
  readonly source: CopySource;
  readonly found: Found;
}

/** A From-URL request sends no content of its own: a body is 400 InvalidHeaderValue (Content-Length). */
function refuseBody(call: BlobCall): void {
  const length = header(call, 'content-length') ?? '0';
  if (Number(length) !== 0) throw invalidHeaderValue('Content-Length', length);
}

/** The source blob: its URL resolved, its readability checked before it is looked up, its conditions met. */
export async function sourceBlob(call: BlobCall): Promise<SourceBlob> {
  refuseBody(call);
  const source = resolveCopySource(call, header(call, 'x-ms-copy-source')!);
  const conditions = parseConditions(call.headers, 'x-ms-source-');
  await requireSourceReadable(call, source);
  const found = await requireCopySource(call, source, conditions);
  return { source, found };
}

const sourceRangePattern = /^bytes=(\d{1,16})-(\d{0,16})$/;

/**
 * x-ms-source-range (`bytes=start-end`, end inclusive, or `bytes=start-`) over the source's size;
 * the whole source when absent. A range the header cannot be read as is 400 InvalidHeaderValue; one
 * starting at or past the source's end is what the source would answer, 416 InvalidRange, as
 * CannotVerifyCopySource (copySourceFailure).
 */
export function sourceRange(call: BlobCall, sizeBytes: number): ResolvedRange {
  const text = header(call, 'x-ms-source-range');
  if (text === undefined) return { start: 0, endExclusive: sizeBytes };
  const match = sourceRangePattern.exec(text.trim());
  if (match === null) throw invalidHeaderValue('x-ms-source-range', text);
  const start = Number(match[1]);
  const end = match[2] === '' ? undefined : Number(match[2]);
  if (end !== undefined && end < start) throw invalidHeaderValue('x-ms-source-range', text);
  if (start >= sizeBytes) {
    throw copySourceFailure(
      416,
      'InvalidRange',
      'The range specified is invalid for the current size of the resource.',
    );
  }
  return { start, endExclusive: end === undefined ? sizeBytes : Math.min(end + 1, sizeBytes) };
}

/**
 * The source's bytes in `range`, streamed into new content: more than `sizeBytesMax` is 413
 * RequestBodyTooLarge before a byte is read; x-ms-source-content-md5 or -crc64 is verified against
 * what was read (400 Md5Mismatch, Crc64Mismatch; then nothing is kept). The MD5 is always computed
 * (the reply's Content-MD5).
 */
export async function copyRange(
  call: BlobCall,
  { source, found }: SourceBlob,
  range: ResolvedRange,
  sizeBytesMax: number,
): Promise<Received> {
  const sizeBytes = range.endExclusive - range.start;
  if (sizeBytes > sizeBytesMax) throw new StorageError('RequestBodyTooLarge');
  const md5 = parseDigestHeader(header(call, 'x-ms-source-content-md5'), 16, 'InvalidMd5');
  const crc64 = parseDigestHeader(header(call, 'x-ms-source-content-crc64'), 8, 'InvalidHeaderValue');
  if (md5 !== undefined && crc64 !== undefined) throw new StorageError('BothCrc64AndMd5HeaderPresent');
  const { record } = found;
  const stream = await call.services.blobs.readContent(
    source.account,
    record,
    record.etag,
    range.start,
    range.endExclusive,
  );
  // Chosen: a source replaced between its lookup and its read is reported, not read again.
  if (stream === 'changed') {
    throw copySourceFailure(412, 'ConditionNotMet', 'The copy source changed while it was read.');
  }
  const seen: ContentSeen = { sizeBytes: 0, md5: undefined, crc64: undefined };
  const options = { md5, crc64, computeMd5: true, sizeBytesMax, sizeBytesDeclared: sizeBytes };
  const content = await call.services.blobs.writeContent(checkedContent(stream, options, seen));
  return { content, md5: seen.md5, crc64: seen.crc64 };
}

/**
 * Put Blob From URL: 201 Created, a block blob whose content is the source's, shared by reference
 * (every account is in the one store). Content headers come from the request's x-ms-blob-* headers;
 * with x-ms-copy-source-blob-properties not `false` (the default), those not given are the source's.
 * Metadata is the request's. x-ms-source-content-md5 is verified against the source's content and
 * answered as Content-MD5 (400 Md5Mismatch otherwise).
 */
export async function putBlobFromUrl(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  checkBlobName(resource.blob);
  const blobType = header(call, 'x-ms-blob-type')!;
  if (blobType !== 'BlockBlob') throw invalidHeaderValue('x-ms-blob-type', blobType);
  const tier = requestedTier(call, 'BlockBlob');
  const metadata = [...metadataFromHeaders(call.rawHeaders)];
  const conditions = parseConditions(call.headers);
  const sourceMd5 = parseDigestHeader(header(call, 'x-ms-source-content-md5'), 16, 'InvalidMd5');
  const tags = requestTags(call);
  const copySourceTags = copiesSourceTags(call);
  const { source, found } = await sourceBlob(call);
  if (found.record.sizeBytes > putBlobBytesMax) throw new StorageError('RequestBodyTooLarge');
  // A page blob has no blocks to share: its content (pages, zeros between) is streamed into one
  // block, x-ms-source-content-md5 checked on the way (copyRange).
  const whole = { start: 0, endExclusive: found.record.sizeBytes };
  const pageBlock =
    found.state.blobType === 'PageBlob' && whole.endExclusive > 0
      ? { blockId: '', content: (await copyRange(call, { source, found }, whole, putBlobBytesMax)).content }
      : undefined;
  if (pageBlock === undefined && sourceMd5 !== undefined) {
    if (!sourceMd5.equals(await contentMd5(call, source.account, found))) throw new StorageError('Md5Mismatch');
  }
  await requireContainer(call, resource.container);
  const headers = fromUrlContentHeaders(call, found.state.headers);
  const record = await updateBlob(call, resource, async (current) => {
    checkWrite(call, conditions, current, true);
    const committed = (await call.services.blobs.getBlocks(source.account, found.record)).committed;
    // One unnamed block each, as Put Blob writes: the source's block ids are not the new blob's.
    const blocks: Block[] =
      pageBlock === undefined ? committed.map((block) => ({ blockId: '', content: block.content })) : [pageBlock];
    const newState = newContentState(call, current, 'BlockBlob', headers, metadata);
    const state = { ...newState, tier, tags: copySourceTags ? found.state.tags : tags };
    const next = nextRecord(call, resource, state, totalSize(blocks));
    return { record: next, content: { kind: 'replace', blocks }, makesVersion: true, overwrites: true };
  });
  const md5 = sourceMd5?.toString('base64') ?? headers.contentMd5;
  const reply = {
    ...writtenHeaders(record),
    ...versionIdHeader(record),
    ...(md5 !== undefined && { 'Content-MD5': md5 }),
  };
  return { status: 201, headers: reply };
}

/** The request's x-ms-blob-* content headers, the source's where it gives none (unless told not to). */
function fromUrlContentHeaders(call: BlobCall, sourceHeaders: ContentHeaders): ContentHeaders {
  const copyProperties = header(call, 'x-ms-copy-source-blob-properties')?.toLowerCase() !== 'false';
  const given = (name: string) => header(call, `x-ms-blob-${name}`);
  const pick = (name: string, fromSource: string | undefined) =>
    given(name) ?? (copyProperties ? fromSource : undefined);
  const md5 = parseDigestHeader(given('content-md5'), 'any', 'InvalidMd5')?.toString('base64');
  return {
    contentType: pick('content-type', sourceHeaders.contentType),
    contentEncoding: pick('content-encoding', sourceHeaders.contentEncoding),
    contentLanguage: pick('content-language', sourceHeaders.contentLanguage),
    contentDisposition: pick('content-disposition', sourceHeaders.contentDisposition),
    cacheControl: pick('cache-control', sourceHeaders.cacheControl),
    contentMd5: md5 ?? (copyProperties ? sourceHeaders.contentMd5 : undefined),
  };
}
