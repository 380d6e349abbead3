// The blob side of the workload watch: per container, in bounded memory, the Put Block calls and
// how many were small, the blobs read whole, unconditionally, again and again, and the requests a
// lease refused. Blob insights
// (blob-insights.ts) are read from it. Requests of Cerulean's own tools are left out, as for tables
// (tool-traffic.ts): an export's reads are no application's access pattern.
import type { IncomingHttpHeaders } from 'node:http';
import { partitionsWatchedMax, tablesWatchedMax } from '../limits.js';
import type { OperationName } from '../http/service-definition.js';
import { servingTool } from './tool-traffic.js';
import { TopCounter } from './top-counter.js';

/**
 * Below this a staged block is small: the Blob service's high-throughput path starts above 256 KiB
 * (https://learn.microsoft.com/azure/storage/blobs/scalability-targets).
 */
export const smallBlockBytes = 256 * 1024;
/** A blob this big read whole again and again is worth caching or reading by ranges. */
export const largeReadBytes = 1024 * 1024;

export interface BlobReadWatch {
  /** Size of the blob at its last whole read. */
  bytes: number;
}

export interface ContainerWatch {
  readonly account: string;
  readonly container: string;
  /** Put Block calls with a Content-Length, and those below smallBlockBytes. */
  putBlocks: number;
  smallPutBlocks: number;
  putBlockBytes: number;
  /** Blob requests refused for a lease (409 LeaseAlreadyPresent, 412 LeaseIdMissing, …), by error code. */
  readonly leaseRefusals: Map<string, number>;
  /** Whole, unconditional reads (200, no Range, no If-None-Match / If-Modified-Since) of large blobs, by blob. */
  readonly wholeReads: TopCounter<BlobReadWatch>;
}

/** What the watch learns of one answered blob request. */
export interface BlobRequestFacts {
  readonly operation: OperationName;
  readonly account: string;
  /** `container/name`. */
  readonly object: string;
  readonly headers: IncomingHttpHeaders;
  readonly status: number;
  /** The reply's Content-Length, if it has one. */
  readonly replyBytes: number | undefined;
}

export class BlobWatch {
  private containers = new TopCounter<ContainerWatch>(tablesWatchedMax);

  reset(): void {
    this.containers = new TopCounter<ContainerWatch>(tablesWatchedMax);
  }

  watched(): ContainerWatch[] {
    return this.containers.top().map((entry) => entry.value);
  }

  answered(facts: BlobRequestFacts): void {
    if (servingTool()) return;
    if (facts.operation === 'PutBlock') this.putBlock(facts);
    else if (facts.operation === 'GetBlob') this.getBlob(facts);
  }

  /** A blob request refused with `code`: counted when it is a lease's refusal. */
  refused(account: string, object: string, code: string): void {
    if (!code.startsWith('Lease') || servingTool()) return;
    const watch = this.container({ account, object });
    if (watch !== undefined) watch.leaseRefusals.set(code, (watch.leaseRefusals.get(code) ?? 0) + 1);
  }

  private putBlock(facts: BlobRequestFacts): void {
    const bytes = Number(facts.headers['content-length']);
    if (facts.status !== 201 || !Number.isSafeInteger(bytes)) return; // chunked: size unknown
    const watch = this.container(facts);
    if (watch === undefined) return;
    watch.putBlocks++;
    watch.putBlockBytes += bytes;
    if (bytes < smallBlockBytes) watch.smallPutBlocks++;
  }

  private getBlob(facts: BlobRequestFacts): void {
    const { headers } = facts;
    if (facts.status !== 200 || facts.replyBytes === undefined || facts.replyBytes < largeReadBytes) return;
    if (headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) return;
    const watch = this.container(facts);
    const blob = facts.object.slice(facts.object.indexOf('/') + 1);
    const entry = watch?.wholeReads.add(blob, 1, () => ({ bytes: 0 }));
    if (entry !== undefined) entry.value.bytes = facts.replyBytes;
  }

  private container(facts: Pick<BlobRequestFacts, 'account' | 'object'>): ContainerWatch | undefined {
    const container = facts.object.slice(0, facts.object.indexOf('/'));
    return this.containers.add(`${facts.account}\u0000${container}`, 1, () => ({
      account: facts.account,
      container,
      putBlocks: 0,
      smallPutBlocks: 0,
      putBlockBytes: 0,
      leaseRefusals: new Map(),
      wholeReads: new TopCounter<BlobReadWatch>(partitionsWatchedMax),
    }))?.value;
  }
}
