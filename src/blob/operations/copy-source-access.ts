// The blob x-ms-copy-source names, and whether the request may read it: Copy Blob (asynchronous or
// with x-ms-requires-sync), Put Blob From URL, Put Block From URL and Append Block From URL ask it.
// The source is a blob of any account of this server, path-style or host-style; Cerulean makes no
// outbound connections, so a source elsewhere is refused (sourceElsewhere). The source is readable
// through a SAS in its URL (verified for its account: service, account or user delegation SAS),
// else through x-ms-copy-source-authorization (a bearer token for its account), else, in the
// request's own account, through the request's credential (its read permission on that blob), else
// through the public access level of its container; otherwise CannotVerifyCopySource, carrying
// what the source would have answered a read (copy-blob, "Authorization"; copy-blob-from-url).
import { invalidHeaderValue, StorageError, type ErrorElement } from '../../errors.js';
import type { Access } from '../../http/authorize.js';
import type { SasNeed } from '../../http/sas.js';
import { versionIdOfKey, versionKey, type BlobKey } from '../../storage/blob-store.js';
import { isSnapshotStamp } from '../wire/etag.js';
import { parseBlobResource } from '../resources.js';
import { findBlob, header, versioned, type BlobCall, type Found } from './access.js';
import { checkSourceConditions, type Conditions } from '../wire/conditions.js';
import { findVersion } from './versions.js';
import { publicAccessLevel } from './anonymous.js';

/** Reading a blob: Read, for an object (create-service-sas, create-account-sas). */
const readSource: SasNeed = { resourceType: 'o', service: 'r', account: ['r'] };

/** A copy source of this server: its account, the blob version it names, and its URL's query as written. */
export interface CopySource {
  readonly account: string;
  readonly key: BlobKey;
  readonly rawQuery: string;
}

/**
 * CannotVerifyCopySource with what the source answered (or would have): its status and code in
 * x-ms-copy-source-status-code and x-ms-copy-source-error-code and in the error body's
 * CopySourceStatusCode, CopySourceErrorCode and CopySourceErrorMessage (as the official SDKs read
 * them). The reply's own status is the source's 404, else 403 for any refusal (401 included), else 400.
 */
export function copySourceFailure(status: number, code: string, message: string): StorageError {
  const replyStatus = status === 404 ? 404 : status === 401 || status === 403 ? 403 : 400;
  const error = new CopySourceError(replyStatus, message, [
    ['CopySourceStatusCode', String(status)],
    ['CopySourceErrorCode', code],
    ['CopySourceErrorMessage', message],
  ]);
  error.replyHeaders = { 'x-ms-copy-source-status-code': String(status), 'x-ms-copy-source-error-code': code };
  return error;
}

/** CannotVerifyCopySource at a status of its own (the code's default is 404, errors.ts). */
class CopySourceError extends StorageError {
  override readonly status: number;

  constructor(status: number, message: string, elements: readonly ErrorElement[] = []) {
    super('CannotVerifyCopySource', message, undefined, elements);
    this.status = status;
  }
}

/** The source is missing (or its container or account): 404, as a read of it would be. */
function copySourceMissing(): StorageError {
  return copySourceFailure(404, 'BlobNotFound', 'The specified blob does not exist.');
}

/**
 * A source on another host or port: Cerulean makes no outbound connections (docs/blob.md). Chosen:
 * 400 CannotVerifyCopySource, so that clients do not retry, with the reason in the message.
 */
function sourceElsewhere(source: string): StorageError {
  const where = source.split('?')[0];
  return new CopySourceError(
    400,
    `The copy source ${where} is not a blob of this server: Cerulean makes no outbound connections.`,
  );
}

/** The blob `text` (x-ms-copy-source) names on this server; 400 InvalidHeaderValue when it names none. */
export function resolveCopySource(call: BlobCall, text: string): CopySource {
  const invalid = () => invalidHeaderValue('x-ms-copy-source', text);
  if (!URL.canParse(text)) throw invalid();
  const url = new URL(text);
  let local;
  try {
    local = call.localTarget(url);
  } catch {
    throw invalid(); // a path that names no account
  }
  if (local === undefined) throw sourceElsewhere(text);
  const resource = parseBlobResource(local.resourcePath);
  if (resource.kind !== 'blob') throw invalid();
  const snapshot = url.searchParams.get('snapshot') ?? '';
  const versionId = url.searchParams.get('versionid') ?? '';
  const stamps = [snapshot, versionId].filter((stamp) => stamp !== '');
  if (stamps.length > 1 || !stamps.every(isSnapshotStamp)) throw invalid();
  if (!local.known) throw copySourceMissing();
  const key = {
    container: resource.container,
    name: resource.blob,
    snapshot: versionId === '' ? snapshot : versionKey(versionId),
  };
  return { account: local.account, key, rawQuery: local.rawQuery };
}

/**
 * The source as it is now (a snapshot, a previous version, the current one by its id too, or the
 * base blob), its x-ms-source-* `conditions` met: 404 CannotVerifyCopySource when it is missing.
 */
export async function requireCopySource(call: BlobCall, source: CopySource, conditions: Conditions): Promise<Found> {
  const { account, key } = source;
  const versionId = versionIdOfKey(key.snapshot);
  const found =
    versionId === undefined
      ? await findBlob(call, key, account)
      : await findVersion(call, { kind: 'blob', container: key.container, blob: key.name }, versionId, account);
  if (found === undefined) throw copySourceMissing();
  checkSourceConditions(conditions, versioned(found));
  return found;
}

/**
 * Throws CannotVerifyCopySource unless the request may read `source`. Checked before anything of
 * the source is looked up, so that a source the request may not read is not revealed to exist.
 */
export async function requireSourceReadable(call: BlobCall, source: CopySource): Promise<void> {
  const resourceName = `${source.key.container}/${source.key.name}`;
  let refusal: StorageError;
  try {
    const access = await sourceAccess(call, source, resourceName);
    if (access !== undefined) {
      access.require(readSource, resourceName);
      return;
    }
    // No credential for another account: the source answers as to an anonymous read of a private blob.
    refusal = new StorageError('ResourceNotFound');
  } catch (error) {
    if (!(error instanceof StorageError) || (error.status !== 403 && error.status !== 401)) throw error;
    refusal = error;
  }
  if ((await publicAccessLevel(call.services, source.account, source.key.container)) !== undefined) return;
  throw copySourceFailure(refusal.status, refusal.code, refusal.message);
}

/** What speaks for the source: a SAS in its URL, else a bearer token for it, else (same account) the request. */
async function sourceAccess(call: BlobCall, source: CopySource, resourceName: string): Promise<Access | undefined> {
  const sas = await call.sasAccessOf(source.rawQuery, resourceName, source.account);
  if (sas !== undefined) return sas;
  const authorization = header(call, 'x-ms-copy-source-authorization');
  if (authorization !== undefined) {
    // Only bearer tokens (copy-blob-from-url, put-blob-from-url: "Only Bearer type is supported").
    const scheme = authorization.split(' ')[0] ?? '';
    if (scheme.toLowerCase() !== 'bearer') throw invalidHeaderValue('x-ms-copy-source-authorization', scheme);
    return call.bearerAccessOf(authorization, source.account);
  }
  return source.account === call.account ? call.access : undefined;
}
