// Whether a URL a request names (a copy source) is served by this server, and which account it
// names there. Cerulean makes no outbound connections, so a copy source elsewhere is refused; one
// of this server is read from the store directly (docs/blob.md "Copies between accounts").
import { parseAccountTarget, splitRequestTarget } from './account-target.js';

/** A URL of this server: its account (primary name) and the path after it, still percent-encoded. */
export interface LocalTarget {
  readonly account: string;
  /** Whether the server has that account. */
  readonly known: boolean;
  readonly resourcePath: string;
  /** The query as written (after '?', still percent-encoded; '' when none). */
  readonly rawQuery: string;
}

const loopbackNames = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * `url` is this server's when it names the port the request came to (the Host the request was
 * sent to) and a host name that reaches it: the request's own, a loopback name (localhost,
 * 127.0.0.1, [::1], *.localhost) when the request's is one too, or a host-style sibling
 * (`{account}.` before the same rest of the name). Then its account is read as the request's is
 * (path-style or host-style, account-target.ts). Chosen: behind a proxy that changes the port, a
 * source URL naming the proxy is not recognised (the server cannot know the proxy's address).
 */
export function localTarget(
  url: URL,
  requestHost: string | undefined,
  https: boolean,
  isAccount: (name: string) => boolean,
): LocalTarget | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (requestHost === undefined) return undefined;
  let own: URL;
  try {
    own = new URL(`${https ? 'https' : 'http'}://${requestHost}/`);
  } catch {
    return undefined;
  }
  if (effectivePort(url) !== effectivePort(own)) return undefined;
  if (!sameServerName(url.hostname.toLowerCase(), own.hostname.toLowerCase(), isAccount)) return undefined;
  const requestTarget = splitRequestTarget(`${url.pathname}${url.search}`);
  const target = parseAccountTarget(requestTarget, url.host, isAccount);
  return {
    account: target.account,
    known: isAccount(target.account),
    resourcePath: target.resourcePath,
    rawQuery: requestTarget.rawQuery,
  };
}

function effectivePort(url: URL): string {
  return url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
}

function sameServerName(name: string, own: string, isAccount: (name: string) => boolean): boolean {
  if (name === own) return true;
  const loopback = (host: string) => loopbackNames.has(host) || host.endsWith('.localhost');
  if (loopback(name) && loopback(own)) return true;
  const rest = (host: string) => host.slice(host.indexOf('.') + 1);
  const label = name.split('.')[0]!.replace(/-secondary$/, '');
  return name.includes('.') && isAccount(label) && (rest(name) === own || rest(name) === rest(own));
}
