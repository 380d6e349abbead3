// Large entities (design guide): a value bigger than one entity may hold (1 MiB) is cut into
// chunks stored as Binary properties of rows in one partition. A head row names the current
// version with its size and SHA-256; readers check both. Chunks of a new version are written
// first, then the head switches to it in one write, then the old chunks go: a reader never sees a
// mixed version, and a writer that dies half-way leaves only unreferenced chunks (see collect()).
import { createHash, randomUUID } from 'node:crypto';
import type { TableClient } from '@azure/data-tables';
import { codecs, joinComponents, prefixRange } from '../keys.js';
import { limits } from '../limits.js';
import { keys } from '../filter.js';
import { wireString, type RawEntity } from '../model.js';
import { defaultRetryPolicy, withRetry, type RetryPolicy } from '../retry.js';
import { deleteIfPresent, rawPages, readRaw } from '../table.js';
import { IntegrityError } from './wide-entity.js';

export { IntegrityError };

/**
 * 11 Binary properties of 64 KiB: 704 KiB of data per chunk row. The service counts binary bytes
 * (15 would fit), but Azurite counts the JSON body, where base64 makes them 4/3 larger; 11 fit both.
 */
const propertiesPerChunk = 11;
const bytesPerChunk = propertiesPerChunk * limits.binaryBytes;
const chunkCodec = codecs.uint(6);
const text = codecs.text();

export interface LargeObjectInfo {
  version: string;
  size: number;
  sha256: string;
  chunks: number;
}

export class LargeObjectStore {
  private readonly retry: RetryPolicy;

  constructor(
    readonly client: TableClient,
    options: { retry?: RetryPolicy; concurrency?: number } = {},
  ) {
    this.retry = options.retry ?? defaultRetryPolicy;
    this.concurrency = options.concurrency ?? 2;
  }

  private readonly concurrency: number;

  private headKey(name: string): string {
    return joinComponents([text.encode(name)]);
  }

  private chunkKey(name: string, version: string, index: number): string {
    return joinComponents([text.encode(name), text.encode(version), chunkCodec.encode(index)]);
  }

  /** Stores `data` under `name` in `partitionKey`, replacing any earlier version. */
  async put(partitionKey: string, name: string, data: Uint8Array): Promise<LargeObjectInfo> {
    const version = randomUUID();
    const chunks = Math.max(1, Math.ceil(data.byteLength / bytesPerChunk));
    const info: LargeObjectInfo = {
      version,
      size: data.byteLength,
      sha256: createHash('sha256').update(data).digest('hex'),
      chunks,
    };
    let next = 0;
    const writer = async () => {
      for (let index = next++; index < chunks; index = next++) {
        const row: Record<string, unknown> = { partitionKey, rowKey: this.chunkKey(name, version, index) };
        const chunk = data.subarray(index * bytesPerChunk, (index + 1) * bytesPerChunk);
        for (let p = 0; p * limits.binaryBytes < chunk.byteLength; p++) {
          const piece = chunk.subarray(p * limits.binaryBytes, (p + 1) * limits.binaryBytes);
          row[`d${String(p).padStart(2, '0')}`] = {
            value: Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('base64'),
            type: 'Binary',
          };
        }
        await withRetry(() => this.client.upsertEntity(row as never, 'Replace'), this.retry);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, chunks) }, writer));
    const head = {
      partitionKey,
      rowKey: this.headKey(name),
      version: { value: info.version, type: 'String' },
      size: { value: String(info.size), type: 'Int64' },
      sha256: { value: info.sha256, type: 'String' },
      chunks: { value: info.chunks, type: 'Int32' },
    };
    await withRetry(() => this.client.upsertEntity(head as never, 'Replace'), this.retry);
    await this.collect(partitionKey, name);
    return info;
  }

  async info(partitionKey: string, name: string): Promise<LargeObjectInfo | undefined> {
    const head = await readRaw(this.client, partitionKey, this.headKey(name), this.retry);
    if (!head) return undefined;
    return {
      version: wireString(head.version)!,
      size: Number(wireString(head.size)),
      sha256: wireString(head.sha256)!,
      chunks: Number(wireString(head.chunks)),
    };
  }

  private async chunkRows(partitionKey: string, name: string, version?: string): Promise<RawEntity[]> {
    const range = prefixRange(version === undefined ? [text.encode(name)] : [text.encode(name), text.encode(version)]);
    const filter = keys.partitionKey('eq', partitionKey).and(keys.rowKeyRange(range));
    const rows: RawEntity[] = [];
    for await (const page of rawPages(this.client, { filter, pageSize: 8 }, this.retry)) rows.push(...page.items);
    return rows;
  }

  /** The current version's bytes; IntegrityError if a chunk is missing or the size or hash differ. */
  async get(partitionKey: string, name: string): Promise<Uint8Array | undefined> {
    const info = await this.info(partitionKey, name);
    if (!info) return undefined;
    const rows = await this.chunkRows(partitionKey, name, info.version);
    if (rows.length !== info.chunks)
      throw new IntegrityError(`${name}: ${rows.length} of ${info.chunks} chunks present`);
    const pieces: Buffer[] = [];
    for (const row of rows) {
      const names = Object.keys(row)
        .filter((key) => /^d[0-9]{2}$/.test(key))
        .sort();
      for (const key of names) pieces.push(Buffer.from(wireString(row[key])!, 'base64'));
    }
    const data = Buffer.concat(pieces);
    const sha256 = createHash('sha256').update(data).digest('hex');
    if (data.byteLength !== info.size || sha256 !== info.sha256) {
      throw new IntegrityError(
        `${name}: read ${data.byteLength} bytes with SHA-256 ${sha256}, expected ${info.size} bytes with ${info.sha256}`,
      );
    }
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }

  /** Deletes chunks of versions the head does not name (left by replaced or interrupted writes). */
  async collect(partitionKey: string, name: string): Promise<number> {
    const info = await this.info(partitionKey, name);
    const head = this.headKey(name);
    let removed = 0;
    for (const row of await this.chunkRows(partitionKey, name)) {
      if (row.rowKey === head) continue;
      if (info && row.rowKey.startsWith(prefixRange([text.encode(name), text.encode(info.version)]).ge)) continue;
      await deleteIfPresent(this.client, partitionKey, row.rowKey, this.retry);
      removed++;
    }
    return removed;
  }

  /** Removes the head (the object is gone from then on), then every chunk. */
  async delete(partitionKey: string, name: string): Promise<void> {
    await deleteIfPresent(this.client, partitionKey, this.headKey(name), this.retry);
    await this.collect(partitionKey, name);
  }
}
