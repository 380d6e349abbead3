// A raw node:http Queue client for the benchmark, signed with Shared Key in the Blob and Queue
// services' format (https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key):
// canonicalized x-ms-* headers and every query parameter in the canonicalized resource. Loopback only.
import http from 'node:http';
import { createHmac } from 'node:crypto';
import { collectResponse, devAccountKey, type TableResponse } from './client.js';

export interface QueueEndpoint {
  host: string;
  port: number;
  account: string;
}

export interface QueueRequest {
  method: string;
  /** Path after the account, e.g. `myqueue/messages`; queue names need no encoding. */
  resource: string;
  /** Query parameters, unencoded (all are signed). */
  query?: Record<string, string>;
  body?: string;
  /** Collect the body as text; otherwise a success body is drained unread. */
  readBody?: boolean;
}

const queueVersion = '2021-12-02';

export class QueueHttpClient {
  constructor(
    readonly endpoint: QueueEndpoint,
    private readonly agent: http.Agent,
    private readonly requestTimeoutMs: number,
  ) {}

  send(request: QueueRequest): Promise<TableResponse> {
    const path = `/${this.endpoint.account}/${request.resource}`;
    const query = request.query ?? {};
    const date = new Date().toUTCString();
    const length = request.body === undefined ? 0 : Buffer.byteLength(request.body);
    const headers: Record<string, string | number> = { 'x-ms-date': date, 'x-ms-version': queueVersion };
    if (request.body !== undefined) headers['content-type'] = 'application/xml';
    headers['content-length'] = length;
    headers.authorization = this.authorization(request.method, path, query, headers);
    const search = new URLSearchParams(query).toString();
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.endpoint.host,
          port: this.endpoint.port,
          method: request.method,
          path: search === '' ? path : `${path}?${search}`,
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

  /** Shared Key: the verb, the standard headers (Content-Length empty when 0), x-ms-* headers, the resource. */
  private authorization(
    method: string,
    path: string,
    query: Record<string, string>,
    headers: Record<string, string | number>,
  ): string {
    const length = headers['content-length'] === 0 ? '' : String(headers['content-length']);
    const contentType = String(headers['content-type'] ?? '');
    const standard = [method, '', '', length, '', contentType, '', '', '', '', '', ''];
    const msHeaders = Object.keys(headers)
      .filter((name) => name.startsWith('x-ms-'))
      .sort()
      .map((name) => `${name}:${headers[name]}\n`)
      .join('');
    const parameters = Object.entries(query)
      .map(([name, value]) => `\n${name.toLowerCase()}:${value}`)
      .sort()
      .join('');
    const stringToSign = `${standard.join('\n')}\n${msHeaders}/${this.endpoint.account}${path}${parameters}`;
    const signature = createHmac('sha256', devAccountKey).update(stringToSign, 'utf8').digest('base64');
    return `SharedKey ${this.endpoint.account}:${signature}`;
  }
}
