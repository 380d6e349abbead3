// Put Blob: a block blob's whole content in one streamed request, or a new empty append blob
// (https://learn.microsoft.com/rest/api/storageservices/put-blob).
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import { metadataFromHeaders } from '../../http/metadata-headers.js';
import type { Block } from '../../storage/blob-store.js';
import {
  findBlob,
  header,
  keyOf,
  newContentState,
  nextRecord,
  refuseSnapshot,
  requireContainer,
  updateBlob,
  writtenHeaders,
  type BlobCall,
  type BlobOf,
} from './access.js';
import { versionIdHeader } from './versions.js';
import { checkBlobName, checkWrite, blobTypeOf } from './checks.js';
import { checksumReplyHeaders, contentHeadersOf, receiveContent, type Received } from './content.js';
import { putBlobBytesMax } from '../limits.js';
import { parseConditions } from '../wire/conditions.js';
import { requestedTier } from './tier.js';
import { requestTags } from './tags.js';
import { newPageBlob } from './pages.js';
import type { ContentChange } from '../../storage/blob-store.js';

/**
 * 201 Created. Conditions and lease are checked before the body is read (a refused request reads
 * nothing) and again, atomically, when the record is written. Without x-ms-blob-content-md5 the
 * blob keeps the MD5 of what was received, as the service does for Put Blob.
 */
export async function putBlob(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  checkBlobName(resource.blob);
  const blobType = blobTypeOf(call);
  const tier = requestedTier(call, blobType);
  const metadata = [...metadataFromHeaders(call.rawHeaders)];
  const tags = requestTags(call);
  const conditions = parseConditions(call.headers);
  // A blob found is in its container: only a blob not found needs the container looked up.
  const found = await findBlob(call, keyOf(resource));
  if (found === undefined) await requireContainer(call, resource.container);
  checkWrite(call, conditions, found, true);
  let blocks: Block[] = [];
  let received: Received | undefined;
  const pageBlob = blobType === 'PageBlob' ? newPageBlob(call) : undefined;
  if (blobType !== 'BlockBlob') {
    const length = header(call, 'content-length') ?? '0';
    // An append blob starts empty, a page blob all zeros: neither takes a body.
    if (Number(length) !== 0) throw invalidHeaderValue('Content-Length', length);
  } else {
    if (header(call, 'x-ms-blob-content-md5') !== undefined && header(call, 'x-ms-content-crc64') !== undefined) {
      throw new StorageError('BothCrc64AndMsMd5HeaderPresent');
    }
    received = await receiveContent(call, putBlobBytesMax, true, true);
    blocks = [{ blockId: '', content: received.content }];
  }
  const sizeBytes = pageBlob?.sizeBytes ?? received?.content.sizeBytes ?? 0;
  const content: ContentChange =
    pageBlob === undefined ? { kind: 'replace', blocks } : { kind: 'pages', change: { kind: 'create' } };
  const headers = contentHeadersOf(call, true, received?.md5?.toString('base64'));
  const record = await updateBlob(
    call,
    resource,
    (current) => {
      checkWrite(call, conditions, current, true);
      const state = {
        ...newContentState(call, current, blobType, headers, metadata),
        tier,
        tags,
        sequenceNumber: pageBlob?.sequenceNumber,
      };
      return { record: nextRecord(call, resource, state, sizeBytes), content, makesVersion: true, overwrites: true };
    },
    { found },
  );
  const checksums = received && checksumReplyHeaders(received);
  const reply = { ...writtenHeaders(record), ...checksums, ...versionIdHeader(record) };
  return { status: 201, headers: reply };
}
