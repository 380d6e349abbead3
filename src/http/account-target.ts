// How a request's target names its account, the same for every service: path-style
// `/{account}/…` or host-style `{account}.{service}.host/…`, either with `-secondary` for the
// read replica. What follows the account is the service's to read (ServiceDefinition.parseResource).
import { StorageError } from '../errors.js';

/** A request target split once: the path as received and the query, raw and parsed. */
export interface RequestTarget {
  /** Still percent-encoded, for signing. */
  readonly rawPath: string;
  /** Everything after `?`, as received (SAS signatures are checked against it). */
  readonly rawQuery: string;
  readonly query: URLSearchParams;
}

export function splitRequestTarget(url: string): RequestTarget {
  const queryAt = url.indexOf('?');
  const rawQuery = queryAt < 0 ? '' : url.slice(queryAt + 1);
  return { rawPath: queryAt < 0 ? url : url.slice(0, queryAt), rawQuery, query: new URLSearchParams(rawQuery) };
}

export interface AccountTarget {
  readonly account: string;
  /** The request-target path as received (still percent-encoded), for signing. */
  readonly rawPath: string;
  readonly pathStyle: boolean;
  /** Was the account named with `-secondary` (the read replica endpoint)? */
  readonly secondary: boolean;
  /** The path after the account and its slash, still percent-encoded: the service's resource. */
  readonly resourcePath: string;
  readonly query: URLSearchParams;
}

/** Finds the account a request target names; throws 400 InvalidUri when it names none. */
export function parseAccountTarget(
  { rawPath, query }: RequestTarget,
  host: string | undefined,
  isAccount: (name: string) => boolean,
): AccountTarget {
  if (!rawPath.startsWith('/')) throw new StorageError('InvalidUri');

  const hostAccount = accountFromHost(host, isAccount);
  let rest: string;
  let account: string;
  if (hostAccount === undefined) {
    const slash = rawPath.indexOf('/', 1);
    account = rawPath.slice(1, slash < 0 ? undefined : slash);
    rest = slash < 0 ? '' : rawPath.slice(slash + 1);
  } else {
    account = hostAccount;
    rest = rawPath.slice(1);
  }
  if (account === '') throw new StorageError('InvalidUri');
  const secondary = account.endsWith('-secondary');
  if (secondary) account = account.slice(0, -'-secondary'.length);
  // The Python SDK (azure-data-tables 12.4.2) addresses the path-style secondary endpoint as
  // /{account}-secondary/{account}/…: the primary segment repeated after the secondary one.
  if (secondary && hostAccount === undefined && rest.startsWith(`${account}/`)) rest = rest.slice(account.length + 1);
  return { account, rawPath, pathStyle: hostAccount === undefined, secondary, resourcePath: rest, query };
}

/**
 * Host-style when the first DNS label (less `-secondary`) is a known account and the host is a
 * name with more labels, not an IP or `localhost` (docs/protocol-notes.md "URLs and accounts"). The
 * service label (`table`, `queue`) is not checked: each service has its own port.
 */
function accountFromHost(host: string | undefined, isAccount: (name: string) => boolean): string | undefined {
  if (host === undefined) return undefined;
  const hostname = host.replace(/:\d+$/, '');
  const dot = hostname.indexOf('.');
  if (dot < 0 || /^[\d.]+$/.test(hostname) || hostname.startsWith('[')) return undefined;
  const label = hostname.slice(0, dot).toLowerCase();
  return isAccount(label.replace(/-secondary$/, '')) ? label : undefined;
}
