// Which of a URL's hosts to connect to (hosts.ts), as libpq's target_session_attrs decides: with
// `read-write`, the one that accepts writes. After a failover the old primary refuses connections
// (or, restarted as a standby, writes); the connection that meets that calls `lost`, the next
// connection probes the hosts again and finds the promoted one. No proxy is needed, and every
// Cerulean process finds the new primary on its own.
import pg from 'pg';
import type { DatabaseTarget, HostPort } from './hosts.js';

/** A probe of one host gives up after this: a dead host must not hold up finding a live one. */
const probeTimeoutMs = 2_000;

export interface LocatorEvents {
  /** The chosen host changed from one to another (not the first choice): a failover, as seen here. */
  onFailover?(from: HostPort, to: HostPort): void;
}

export class HostLocator {
  private chosen: HostPort | undefined;
  private probing: Promise<HostPort> | undefined;
  /** When this process last saw the chosen host change (ms since the epoch); undefined: never. */
  lastFailoverMs: number | undefined;
  private previous: HostPort | undefined;

  constructor(
    readonly target: DatabaseTarget,
    private readonly events: LocatorEvents = {},
  ) {}

  /** Whether there is anything to choose: several hosts, or a session attribute to check. */
  get locating(): boolean {
    return this.target.hosts.length > 1 || this.target.sessionAttrs !== 'any';
  }

  /** The host new connections go to; probes the hosts when none is chosen. */
  async current(): Promise<HostPort> {
    if (this.chosen !== undefined) return this.chosen;
    this.probing ??= this.probe().finally(() => (this.probing = undefined));
    return this.probing;
  }

  /** A connection to `host` failed or found it the wrong kind: choose again on the next connection. */
  lost(host: HostPort): void {
    if (this.chosen !== undefined && sameHost(this.chosen, host)) this.chosen = undefined;
  }

  private async probe(): Promise<HostPort> {
    const reasons: string[] = [];
    for (const host of this.target.hosts) {
      const reason = await this.unsuitable(host);
      if (reason === undefined) {
        this.choose(host);
        return host;
      }
      reasons.push(`${host.host}:${host.port} ${reason}`);
    }
    // The front door answers this like any database out of reach: 503 ServerBusy.
    throw Object.assign(new Error(`no suitable PostgreSQL host (${reasons.join('; ')})`), { code: 'ECONNREFUSED' });
  }

  private choose(host: HostPort): void {
    if (this.previous !== undefined && !sameHost(this.previous, host)) {
      this.lastFailoverMs = Date.now();
      this.events.onFailover?.(this.previous, host);
    }
    this.previous = host;
    this.chosen = host;
  }

  /** Why `host` will not do (unreachable, or the wrong kind), or undefined when it will. */
  private async unsuitable(host: HostPort): Promise<string | undefined> {
    if (!this.locating) return undefined;
    const client = new pg.Client({
      connectionString: this.target.urlFor(host),
      connectionTimeoutMillis: probeTimeoutMs,
      query_timeout: probeTimeoutMs,
      application_name: 'cerulean-locator',
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ recovery: boolean }>('SELECT pg_is_in_recovery() AS recovery');
      const standby = rows[0]?.recovery === true;
      if (this.target.sessionAttrs === 'read-write' && standby) return 'is a standby';
      if (this.target.sessionAttrs === 'standby' && !standby) return 'is not a standby';
      return undefined;
    } catch (error) {
      return `unreachable (${(error as Error).message})`;
    } finally {
      client.end().catch(() => undefined);
    }
  }
}

function sameHost(a: HostPort, b: HostPort): boolean {
  return a.host === b.host && a.port === b.port;
}

type ConnectCallback = (error: Error | null, client?: pg.Client) => void;

/**
 * A driver Client class whose connections go where `locator` says; a connection that fails tells
 * the locator. Give it to pg.Pool as its `Client`, or construct it directly.
 */
export function locatedClient(locator: HostLocator): typeof pg.Client {
  class LocatedClient extends pg.Client {
    private located: HostPort | undefined;

    constructor(config?: string | pg.ClientConfig) {
      super(config);
      // A connection that breaks (the host died, or restarted as a standby) sends the next
      // connection to probe again. An 'error' listener also keeps the break from ending the process.
      this.on('error', () => {
        if (this.located !== undefined) locator.lost(this.located);
      });
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.Client> | void {
      if (callback === undefined) {
        return new Promise((resolve, reject) => this.connect((error) => (error ? reject(error) : resolve(this))));
      }
      locator.current().then(
        (host) => {
          this.located = host;
          this.host = host.host;
          this.port = host.port;
          super.connect((error: Error | null) => {
            if (error) locator.lost(host);
            callback(error, this);
          });
        },
        (error: Error) => callback(error),
      );
    }

    /** The host this client is connected to (undefined before connect). */
    get locatedHost(): HostPort | undefined {
      return this.located;
    }
  }
  return LocatedClient as unknown as typeof pg.Client;
}
