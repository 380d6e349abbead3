// PostgreSQL connection URLs as libpq reads them, including several hosts:
// `postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write`
// (https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-MULTIPLE-HOSTS). The
// node-postgres driver takes one host, so the URL is split here into one single-host URL per host;
// locator.ts picks among them as libpq would.

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/**
 * libpq's `target_session_attrs`, the values Cerulean honours: `any` takes the first host that
 * answers; `read-write` and `primary` the first that accepts writes (not in recovery); `standby`
 * and `read-only` one in recovery (a hot standby), for the read-access secondary.
 */
export type SessionAttrs = 'any' | 'read-write' | 'standby';

export interface DatabaseTarget {
  readonly hosts: readonly HostPort[];
  readonly sessionAttrs: SessionAttrs;
  /** The URL naming only `host` (target_session_attrs removed: the driver does not know it). */
  urlFor(host: HostPort): string;
}

const defaultPort = 5432;
const schemes = ['postgres://', 'postgresql://'];

/** Parses a libpq URL; throws an Error whose message a user can act on. */
export function parseDatabaseUrl(text: string): DatabaseTarget {
  const scheme = schemes.find((prefix) => text.startsWith(prefix));
  if (scheme === undefined) throw new Error('a PostgreSQL URL starts with postgres:// or postgresql://');
  const rest = text.slice(scheme.length);
  const authorityEnd = firstOf(rest, ['/', '?', '#']);
  const authority = rest.slice(0, authorityEnd);
  const at = authority.lastIndexOf('@');
  const userInfo = at < 0 ? '' : authority.slice(0, at + 1);
  const hosts = parseHosts(authority.slice(at + 1));
  // One placeholder host lets the WHATWG parser read the rest (user, password, path, query).
  let url: URL;
  try {
    url = new URL(`postgres://${userInfo}placeholder${rest.slice(authorityEnd)}`);
  } catch {
    throw new Error('not a valid PostgreSQL URL, e.g. postgres://user:password@host:5432/database');
  }
  const sessionAttrs = parseSessionAttrs(url.searchParams.get('target_session_attrs'));
  url.searchParams.delete('target_session_attrs');
  // libpq's `prefer` tries TLS and falls back to none; node-postgres cannot fall back, and reads
  // `prefer` as `require`. pg_auto_failover's URLs say `prefer`: Cerulean connects as `allow` would.
  if (['prefer', 'allow'].includes(url.searchParams.get('sslmode') ?? '')) url.searchParams.set('sslmode', 'disable');
  return {
    hosts,
    sessionAttrs,
    urlFor: ({ host, port }) => {
      const single = new URL(url.href);
      single.host = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      return single.href;
    },
  };
}

function firstOf(text: string, characters: readonly string[]): number {
  const found = characters.map((character) => text.indexOf(character)).filter((index) => index >= 0);
  return found.length === 0 ? text.length : Math.min(...found);
}

function parseHosts(list: string): HostPort[] {
  if (list === '') return [{ host: 'localhost', port: defaultPort }];
  return list.split(',').map((entry) => {
    const bracketed = /^\[([^\]]+)\](?::(\d*))?$/.exec(entry);
    const plain = /^([^:[\]]*)(?::(\d*))?$/.exec(entry);
    const match = bracketed ?? plain;
    if (match === null) throw new Error(`cannot read the host '${entry}' of the PostgreSQL URL`);
    const port = match[2] === undefined || match[2] === '' ? defaultPort : Number(match[2]);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`bad port in '${entry}'`);
    return { host: match[1] === '' ? 'localhost' : decodeURIComponent(match[1]!), port };
  });
}

function parseSessionAttrs(value: string | null): SessionAttrs {
  switch (value ?? 'any') {
    case 'any':
      return 'any';
    case 'read-write':
    case 'primary':
      return 'read-write';
    case 'standby':
    case 'read-only':
    case 'prefer-standby':
      return 'standby';
    default:
      throw new Error(`target_session_attrs=${value} is not supported (any, read-write, primary, standby, read-only)`);
  }
}

/** The URL for display: every host, no password. */
export function describeDatabaseUrl(text: string): string {
  const target = parseDatabaseUrl(text);
  const hosts = target.hosts.map(({ host, port }) => `${host}:${port}`).join(',');
  const one = new URL(target.urlFor(target.hosts[0]!));
  if (one.password !== '') one.password = '***';
  const attrs = target.sessionAttrs === 'any' ? '' : ` (${target.sessionAttrs})`;
  return `${one.href.replace(one.host, hosts)}${attrs}`;
}
