// Append and Flush (https://learn.microsoft.com/rest/api/storageservices/datalakestoragegen2/path/update):
// appended data is a staged block of the file's blob (storage/blob-store.ts), its block id naming
// its position, streamed into the content store and invisible to readers; a flush commits the
// staged blocks that continue the file without a gap up to `position` as the blob's new block list,
// in one write, and drops the rest (or keeps it for a later flush: retainUncommittedData=true).
// x-ms-lease-action takes, renews or releases the path's lease with the write (lease.ts).
import { createHash } from 'node:crypto';
import { invalidQueryParameter, StorageError } from '../../errors.js';
import { parseInteger, requiredParam } from '../../http/query-params.js';
import type { Reply } from '../../http/respond.js';
import type { Block } from '../../storage/blob-store.js';
import { newEtag } from '../../wire/version-etag.js';
import { appendBytesMax, casAttemptsMax } from '../limits.js';
import { encodePathState, isDirectory } from '../state.js';
import { booleanParam } from '../wire.js';
import { leaseAfterWrite, storeLease, writeLeaseAction, type WriteLeaseAction } from './lease.js';
import {
  checkConditions,
  header,
  nowMs,
  pathWriteFailure,
  requirePath,
  versionHeaders,
  type DatalakeCall,
  type FoundPath,
} from './access.js';
import { contentHeadersOf } from './path.js';
import { requireAccess } from './permissions.js';
import { writeBit } from '../../domain/posix-acl.js';

const blockIdPrefix = 'dfs-append-';

/** The staged block id of data appended at `position`: fixed width, so every id of a file has one length. */
function blockIdAt(position: number): string {
  return Buffer.from(`${blockIdPrefix}${position.toString().padStart(16, '0')}`).toString('base64');
}

function positionOfBlock(blockId: string): number | undefined {
  const text = Buffer.from(blockId, 'base64').toString('utf8');
  return text.startsWith(blockIdPrefix) ? Number(text.slice(blockIdPrefix.length)) : undefined;
}

function positionParam(call: DatalakeCall): number {
  const text = requiredParam(call.query, 'position');
  const position = parseInteger('position', text, BigInt(Number.MAX_SAFE_INTEGER));
  if (position < 0) throw invalidQueryParameter('position', text, 'A position is not negative.');
  return position;
}

/** The file data is written to: a bearer caller needs w on it (and x above it). */
async function requireFile(call: DatalakeCall, filesystem: string, path: string): Promise<FoundPath> {
  await requireAccess(call, filesystem, path, { self: writeBit });
  const found = await requirePath(call, filesystem, path);
  if (isDirectory(found.state)) throw new StorageError('PathConflict', 'The path is a directory, not a file.');
  // An append blob's blocks are counted in its state (the Blob API's Append Block); only block blobs take data here.
  if (found.state.blobType !== 'BlockBlob') throw new StorageError('InvalidBlobType');
  return found;
}

/** The body, counted and checked against Content-Length and Content-MD5 as it streams. */
async function* checkedBody(call: DatalakeCall, declared: number, md5: Buffer | undefined): AsyncIterable<Uint8Array> {
  const hash = md5 === undefined ? undefined : createHash('md5');
  let seen = 0;
  for await (const chunk of call.bodyStream ?? [call.body]) {
    seen += chunk.length;
    if (seen > appendBytesMax) throw new StorageError('RequestBodyTooLarge');
    hash?.update(chunk);
    yield chunk;
  }
  if (seen !== declared) throw new StorageError('InvalidInput', 'The body is not as long as Content-Length says.');
  if (hash !== undefined && !hash.digest().equals(md5!)) throw new StorageError('Md5Mismatch');
}

/**
 * PATCH ?action=append&position=n: 202 Accepted; the data waits, unseen, for a flush, or is
 * flushed at once with flush=true (still 202, the only status the SDKs accept for an append, with
 * the flush's ETag and Last-Modified). x-ms-lease-action acquire or
 * auto-renew takes or renews the lease before the data is staged; release and acquire-release act
 * with the flush, so only with flush=true (lease.ts).
 */
export async function appendData(call: DatalakeCall, filesystem: string, path: string): Promise<Reply> {
  const position = positionParam(call);
  const flush = booleanParam(call.query, 'flush') === true;
  const leaseAction = writeLeaseAction(call, flush);
  const declaredText = header(call, 'content-length');
  if (declaredText === undefined) throw new StorageError('MissingContentLengthHeader');
  const declared = Number(declaredText);
  if (declared > appendBytesMax) throw new StorageError('RequestBodyTooLarge');
  const md5Text = header(call, 'content-md5');
  const md5 = md5Text === undefined ? undefined : Buffer.from(md5Text, 'base64');
  if (md5 !== undefined && md5.length !== 16) throw new StorageError('InvalidMd5');
  const found = await requireFile(call, filesystem, path);
  if (position < found.record.sizeBytes) throw new StorageError('InvalidFlushPosition');
  // Checked (and, for acquire or auto-renew without a flush, stored) before any data is kept.
  const lease = leaseAfterWrite(call, found.state.lease, leaseAction);
  if (!flush && lease !== found.state.lease) await leaseBeforeAppend(call, filesystem, path, found, leaseAction);
  const content = await call.services.blobs.writeContent(checkedBody(call, declared, md5));
  const block: Block = { blockId: blockIdAt(position), content };
  const outcome = await call.services.blobs.stageBlock(call.account, filesystem, path, block);
  if (outcome !== 'ok') throw pathWriteFailure(outcome);
  const headers: Record<string, string> = { 'x-ms-request-server-encrypted': 'false' };
  if (md5Text !== undefined) headers['Content-MD5'] = md5Text;
  if (flush) {
    const flushed = await commitAppended(call, filesystem, path, position + declared, leaseAction, false);
    return { status: 202, headers: { ...flushed.headers, ...headers } };
  }
  return { status: 202, headers };
}

/** Stores the lease an append without flush takes or renews, by compare-and-swap. */
async function leaseBeforeAppend(
  call: DatalakeCall,
  filesystem: string,
  path: string,
  first: FoundPath,
  action: WriteLeaseAction | undefined,
): Promise<void> {
  let found = first;
  for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
    if ((await storeLease(call, found, leaseAfterWrite(call, found.state.lease, action))) !== 'raced') return;
    found = await requireFile(call, filesystem, path);
  }
  throw new StorageError('ServerBusy');
}

/**
 * PATCH ?action=flush&position=n: 200 OK. The file becomes its committed blocks and the staged
 * ones that continue them without a gap, up to exactly `position` (else 400 InvalidFlushPosition);
 * x-ms-content-* set its content headers (the others are kept). With retainUncommittedData=true
 * the staged data past `position` stays staged for a later flush (else it is dropped). `close` only
 * tells change notifications, which Cerulean has none of. x-ms-lease-action: lease.ts.
 */
export async function flushData(call: DatalakeCall, filesystem: string, path: string): Promise<Reply> {
  const position = positionParam(call);
  const retain = booleanParam(call.query, 'retainUncommittedData') === true;
  booleanParam(call.query, 'close');
  return commitAppended(call, filesystem, path, position, writeLeaseAction(call, true), retain);
}

/** The flush of everything appended up to `position`, as Flush Data answers it. */
async function commitAppended(
  call: DatalakeCall,
  filesystem: string,
  path: string,
  position: number,
  leaseAction: WriteLeaseAction | undefined,
  retain: boolean,
): Promise<Reply> {
  const given = contentHeadersOf(call);
  for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
    const found = await requireFile(call, filesystem, path);
    checkConditions(call, found.record);
    const lease = leaseAfterWrite(call, found.state.lease, leaseAction);
    const key = { container: filesystem, name: path, snapshot: '' };
    const { committed, staged } = await call.services.blobs.getBlocks(call.account, key);
    const appended = staged
      .map((block) => ({ block, at: positionOfBlock(block.blockId) }))
      .filter((entry): entry is { block: Block; at: number } => entry.at !== undefined)
      .sort((a, b) => a.at - b.at);
    const blocks = [...committed];
    let size = found.record.sizeBytes;
    for (const { block, at } of appended) {
      if (size === position) break;
      if (at < size) continue; // kept by an earlier flush with retainUncommittedData
      if (at !== size) break;
      blocks.push({ blockId: block.blockId, content: block.content });
      size += block.content.sizeBytes;
    }
    if (size !== position) throw new StorageError('InvalidFlushPosition');
    const atMs = nowMs(call);
    const state = { ...found.state, headers: { ...found.state.headers, ...given }, committedBlockCount: 0, lease };
    if (given.contentMd5 === undefined && size !== found.record.sizeBytes)
      delete (state.headers as Record<string, unknown>).contentMd5;
    const record = {
      ...found.record,
      etag: newEtag(atMs),
      lastModifiedMs: atMs,
      sizeBytes: size,
      state: encodePathState(state),
    };
    const outcome = await call.services.blobs.putBlob(
      call.account,
      record,
      retain ? { kind: 'replace', blocks, keepStaged: true } : { kind: 'replace', blocks },
      found.record.etag,
    );
    if (outcome === 'ok') return { status: 200, headers: { ...versionHeaders(record), 'Content-Length': '0' } };
    if (outcome !== 'etagMismatch') throw pathWriteFailure(outcome);
  }
  throw new StorageError('ServerBusy');
}
