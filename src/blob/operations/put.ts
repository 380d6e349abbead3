// Put Blob: a block blob's whole content in one streamed request, or a new empty append blob
// (https://learn.microsoft.com/rest/api/storageservices/put-blob).
import { invalidHeaderValue } from '../../errors.js';
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
import { checkBlobName, checkWrite, blobTypeOf } from './checks.js';
import { contentHeadersOf, receiveContent } from './content.js';
import { putBlobBytesMax } from '../limits.js';
import { parseConditions } from '../wire/conditions.js';

/**
 * 201 Created. Conditions and lease are checked before the body is read (a refused request reads
 * nothing) and again, atomically, when the record is written. Without x-ms-blob-content-md5 the
 * blob keeps the MD5 of what was received, as the service does for Put Blob.
 */
export async function putBlob(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  checkBlobName(resource.blob);
  const blobType = blobTypeOf(call);
  const metadata = [...metadataFromHeaders(call.rawHeaders)];
  const conditions = parseConditions(call.headers);
  // A blob found is in its container: only a blob not found needs the container looked up.
  const found = await findBlob(call, keyOf(resource));
  if (found === undefined) await requireContainer(call, resource.container);
  checkWrite(call, conditions, found);
  let blocks: Block[] = [];
  let sizeBytes = 0;
  let md5: Buffer | undefined;
  if (blobType === 'AppendBlob') {
    const length = header(call, 'content-length') ?? '0';
    if (Number(length) !== 0) throw invalidHeaderValue('Content-Length', length); // an append blob starts empty
  } else {
    const received = await receiveContent(call, putBlobBytesMax, true);
    blocks = [{ blockId: '', content: received.content }];
    sizeBytes = received.content.sizeBytes;
    md5 = received.md5;
  }
  const headers = contentHeadersOf(call, true, md5?.toString('base64'));
  const record = await updateBlob(call, resource, (current) => {
    checkWrite(call, conditions, current);
    const state = newContentState(call, current, blobType, headers, metadata);
    return { record: nextRecord(call, resource, state, sizeBytes), content: { kind: 'replace', blocks } };
  }, { found });
  const reply: Record<string, string> = writtenHeaders(record);
  if (md5 !== undefined) reply['Content-MD5'] = md5.toString('base64');
  const crc64 = header(call, 'x-ms-content-crc64');
  if (crc64 !== undefined) reply['x-ms-content-crc64'] = crc64;
  return { status: 201, headers: reply };
}
