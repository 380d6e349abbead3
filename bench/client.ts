// A raw node:http Table client for the benchmark: no SDK, so the client's own cost stays
// small and identical for every server under test. Loopback only.
import http from 'node:http';
import { createHmac } from 'node:crypto';

export const devAccountName = 'devstoreaccount1';
/** The public development-storage key (Azure REST: authorize-with-shared-key). */
export const devAccountKey = Buffer.from(
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
  'base64',
);

export interface Endpoint {
  host: string;
  port: number;
  account: string;
  /** Further processes serving the same data: requests go round-robin over `port` and these. */
  morePorts?: readonly number[];
}

export interface TableRequest {
  method: string;
  /** Encoded resource path after the account, e.g. `mytable(PartitionKey='p',RowKey='r')`. */
  resource: string;
  /** Already-encoded query string without `?`; never signed (Azure REST: authorize-with-shared-key). */
  query?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Collect the body as text; otherwise a success body is drained unread to keep client cost low. */
  readBody?: boolean;
}

export interface TableResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * Shared Key Lite (Azure REST: authorize-with-shared-key) signs only `date + "\n" + "/" + account + path`, so one
 * signature serves every request to a path within the same second: cache it per second.
 */
export class SharedKeyLiteSigner {
  private second = -1;
  private date = '';
  private readonly authorizationByPath = new Map<string, string>();

  constructor(
    private readonly account: string,
    private readonly key: Buffer,
  ) {}

  sign(path: string): { date: string; authorization: string } {
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.second) {
      this.second = second;
      this.date = new Date(second * 1000).toUTCString();
      this.authorizationByPath.clear();
    }
    let authorization = this.authorizationByPath.get(path);
    if (authorization === undefined) {
      const signature = createHmac('sha256', this.key)
        .update(`${this.date}\n/${this.account}${path}`, 'utf8')
        .digest('base64');
      authorization = `SharedKeyLite ${this.account}:${signature}`;
      this.authorizationByPath.set(path, authorization);
    }
    return { date: this.date, authorization };
  }
}

export class TableHttpClient {
  readonly baseUrl: string;
  private readonly signer: SharedKeyLiteSigner;
  private readonly ports: readonly number[];
  private requests = 0;

  constructor(
    readonly endpoint: Endpoint,
    private readonly agent: http.Agent,
    private readonly requestTimeoutMs: number,
  ) {
    this.baseUrl = `http://${endpoint.host}:${endpoint.port}/${endpoint.account}`;
    this.ports = [endpoint.port, ...(endpoint.morePorts ?? [])];
    this.signer = new SharedKeyLiteSigner(endpoint.account, devAccountKey);
  }

  send(request: TableRequest): Promise<TableResponse> {
    const path = `/${this.endpoint.account}/${request.resource}`;
    const { date, authorization } = this.signer.sign(path);
    const headers: Record<string, string | number> = {
      'x-ms-date': date,
      authorization,
      'x-ms-version': '2019-02-02',
      accept: 'application/json;odata=minimalmetadata',
      DataServiceVersion: '3.0',
      ...request.headers,
    };
    if (request.body !== undefined) {
      headers['content-type'] ??= 'application/json;odata=nometadata';
      headers['content-length'] = Buffer.byteLength(request.body);
    }
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.endpoint.host,
          port: this.ports[this.requests++ % this.ports.length],
          method: request.method,
          path: request.query === undefined ? path : `${path}?${request.query}`,
          headers,
          agent: this.agent,
        },
        (res) => collectResponse(res, request.readBody === true, resolve, reject),
      );
      req.setTimeout(this.requestTimeoutMs, () =>
        req.destroy(new Error(`no answer within ${this.requestTimeoutMs} ms`)),
      );
      req.on('error', reject);
      req.end(request.body);
    });
  }
}

/** Resolves with the response; a success body is drained unread unless `readBody`. */
export function collectResponse(
  res: http.IncomingMessage,
  readBody: boolean,
  resolve: (response: TableResponse) => void,
  reject: (error: Error) => void,
): void {
  const status = res.statusCode ?? 0;
  if (!readBody && status < 400) {
    res.on('end', () => resolve({ status, headers: res.headers, body: '' }));
    res.on('error', reject);
    res.resume();
    return;
  }
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => resolve({ status, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
  res.on('error', reject);
}

/** A keep-alive agent holding one socket per worker of a closed loop. */
export function keepAliveAgent(concurrency: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
}

/** Thrown by operations when a reply is not the one the scenario expects. */
export class UnexpectedReply extends Error {
  constructor(what: string, response: TableResponse) {
    const detail = response.body ? `: ${response.body.slice(0, 200)}` : '';
    super(`${what}: HTTP ${response.status}${detail}`);
  }
}

export async function expectStatus(
  what: string,
  response: Promise<TableResponse>,
  status: number,
): Promise<TableResponse> {
  const settled = await response;
  if (settled.status !== status) throw new UnexpectedReply(what, settled);
  return settled;
}
