// Cerulean's own endpoints, under paths that start with `/_` (no account name can):
//   GET /_metrics          Prometheus text      loopback, --metrics-public, or an account's Shared Key
//   GET|DELETE /_insights  design insights JSON (DELETE starts observing afresh)      same access
//   GET|PUT|DELETE /_faults  fault rules JSON                        always an account's Shared Key
// A Shared Key request signs `/{account}/_metrics` (the path under the account, as for the API).
import type { IncomingMessage } from 'node:http';
import { StorageError } from '../errors.js';
import type { Account } from '../http/accounts.js';
import type { RequestTarget } from '../http/account-target.js';
import { verifySharedKey } from '../http/auth.js';
import { decodeUtf8, readBody } from '../http/body.js';
import type { Reply } from '../http/respond.js';

export interface AdminOptions {
  readonly accounts: ReadonlyMap<string, Account>;
  /** /_metrics and /_insights need no credentials from any address. */
  readonly metricsPublic: boolean;
  /** Undefined when metrics are off (--no-metrics). */
  readonly metrics: (() => Promise<{ readonly contentType: string; readonly text: string }>) | undefined;
  readonly insights: { report(): Promise<object>; reset(): void } | undefined;
  readonly faults: { describe(): object; replace(documentText: string): void; clear(): void };
}

const faultDocumentBytesMax = 64 * 1024;
const jsonContentType = 'application/json; charset=utf-8';

export async function answerAdmin(
  request: IncomingMessage,
  target: RequestTarget,
  options: AdminOptions,
): Promise<Reply> {
  const method = request.method ?? '';
  switch (target.rawPath) {
    case '/_metrics': {
      if (method !== 'GET') break;
      requireReader(request, target, options);
      if (options.metrics === undefined) throw new StorageError('ResourceNotFound', 'Metrics are off (--no-metrics).');
      const { contentType, text } = await options.metrics();
      return { status: 200, headers: { 'Content-Type': contentType }, body: text };
    }
    case '/_insights': {
      if (method !== 'GET' && method !== 'DELETE') break;
      requireReader(request, target, options);
      if (options.insights === undefined) throw new StorageError('ResourceNotFound', 'Insights are off (--no-metrics).');
      if (method === 'DELETE') {
        options.insights.reset();
        return { status: 204 };
      }
      return json(await options.insights.report());
    }
    case '/_faults': {
      if (method !== 'GET' && method !== 'PUT' && method !== 'DELETE') break;
      requireAccountKey(request, target, options.accounts);
      if (method === 'PUT') options.faults.replace(decodeUtf8(await readBody(request, faultDocumentBytesMax)));
      if (method === 'DELETE') options.faults.clear();
      return json(options.faults.describe());
    }
    default:
      throw new StorageError('ResourceNotFound');
  }
  throw new StorageError('UnsupportedHttpVerb');
}

function json(value: object): Reply {
  return { status: 200, headers: { 'Content-Type': jsonContentType }, body: JSON.stringify(value) };
}

/** Metrics and insights: loopback, or --metrics-public, or an account key. */
function requireReader(request: IncomingMessage, target: RequestTarget, options: AdminOptions): void {
  if (options.metricsPublic || isLoopback(request.socket.remoteAddress)) return;
  requireAccountKey(request, target, options.accounts);
}

function requireAccountKey(
  request: IncomingMessage,
  target: RequestTarget,
  accounts: ReadonlyMap<string, Account>,
): void {
  const authorization = request.headers['authorization'];
  const named = /^SharedKey(?:Lite)? ([^:\s]+):/.exec(typeof authorization === 'string' ? authorization : '');
  const account = named === null ? undefined : accounts.get(named[1]!);
  if (account === undefined) {
    throw new StorageError(
      'AuthenticationFailed',
      undefined,
      'This endpoint needs Shared Key authorization with an account key.',
    );
  }
  verifySharedKey({
    method: request.method ?? '',
    rawPath: target.rawPath,
    query: target.query,
    headers: request.headers,
    account,
    pathStyle: false,
    now: Date.now(),
  });
}

function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4.startsWith('127.') || address === '::1';
}
