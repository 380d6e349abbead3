// The bench's Queue client: signed requests (signed-client.ts) with XML bodies. Loopback only.
import http from 'node:http';
import type { TableResponse } from './client.js';
import { SignedHttpClient, type ServiceEndpoint } from './signed-client.js';

export type QueueEndpoint = ServiceEndpoint;

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

export class QueueHttpClient extends SignedHttpClient {
  constructor(endpoint: QueueEndpoint, agent: http.Agent, requestTimeoutMs: number) {
    super(endpoint, agent, requestTimeoutMs, queueVersion);
  }

  override send(request: QueueRequest): Promise<TableResponse> {
    return super.send({
      ...request,
      ...(request.body === undefined ? {} : { headers: { 'content-type': 'application/xml' } }),
    });
  }
}
