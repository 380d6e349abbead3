// Large entities (design guide): a value bigger than one entity may hold (1 MiB) is cut into
// chunks stored as Binary properties of rows in one partition, or (option `blobs`) kept whole in
// one blob, as the guide's "use blob storage to store large property values" says. A head row
// names the current version with its size and SHA-256 (and its blob); readers check both. The
// chunks or the blob of a new version are written first, then the head switches to it in one
// write, then the old version goes: a reader never sees a mixed version, and a writer that dies
// half-way leaves only unreferenced chunks or blobs (see collect()).
import { createHash, randomUUID } from 'node:crypto';
import type { TableClient } from '@azure/data-tables';
import type { ContainerClient } from '@azure/storage-blob';
import { readBlob } from '../blob.js';
import { codecs, joinComponents, prefixRange } from '../keys.js';
import { limits } from '../limits.js';
import { keys } from '../filter.js';
import { wireString, type RawEntity } from '../model.js';
import { defaultRetryPolicy, statusOf, withRetry, type RetryPolicy } from '../retry.js';
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
  /** 0 when the value is in a blob. */
  chunks: number;
  /** The blob holding the value, in the store's container; undefined for chunked values. */
  blob?: string;
}

export interface LargeObjectOptions {
  retry?: RetryPolicy;
  /** Chunk rows written at once. */
  concurrency?: number;
  /**
   * Keep new values in blobs of this container (which must exist) instead of chunk rows. Values
   * written before stay readable either way; each is moved at its next put.
   */
  blobs?: ContainerClient;
  /**
   * collect() leaves unreferenced blobs younger than this alone: they may belong to a put under
   * way, whose head is not written yet. Default 15 minutes.
   */
  orphanGraceMs?: number;
}

/** Re-reads of the head when the blob it named was replaced between the two reads. */
const blobReadRounds = 8;

export class LargeObjectStore {
  private readonly retry: RetryPolicy;
  private readonly concurrency: number;
  private readonly blobs: ContainerClient | undefined;
  private readonly orphanGraceMs: number;

  constructor(
    readonly client: TableClient,
    options: LargeObjectOptions = {},
  ) {
    this.retry = options.retry ?? defaultRetryPolicy;
    this.concurrency = options.concurrency ?? 2;
    this.blobs = options.blobs;
    this.orphanGraceMs = options.orphanGraceMs ?? 15 * 60_000;
  }

  /**
   * Every blob of one value starts with this: a hash of the table, partition and name (any length,
   * any characters), so one container serves many tables and collect() lists one value's blobs.
   */
  blobPrefix(partitionKey: string, name: string): string {
    const digest = createHash('sha256').update(JSON.stringify([this.client.tableName, partitionKey, name]));
    return `large/${digest.digest('hex')}/`;
  }

  private headKey(name: string): string {
    return joinComponents([text.encode(name)]);
  }

  private chunkKey(name: string, version: string, index: number): string {
    return joinComponents([text.encode(name), text.encode(version), chunkCodec.encode(index)]);
  }

  /**
   * Stores `data` under `name` in `partitionKey`, replacing any earlier version: the new chunks or
   * blob first, then the head, then the old version is removed.
   */
  async put(partitionKey: string, name: string, data: Uint8Array): Promise<LargeObjectInfo> {
    const version = randomUUID();
    const sha256 = createHash('sha256').update(data).digest('hex');
    const previous = await this.info(partitionKey, name);
    let info: LargeObjectInfo;
    if (this.blobs) {
      const blob = `${this.blobPrefix(partitionKey, name)}${version}`;
      info = { version, size: data.byteLength, sha256, chunks: 0, blob };
      // A fresh name: If-None-Match makes a retried upload that already landed a 409, not a second write.
      await withRetry(async () => {
        try {
          await this.blobs!.getBlockBlobClient(blob).uploadData(data, { conditions: { ifNoneMatch: '*' } });
        } catch (error) {
          if (statusOf(error) !== 409) throw error;
        }
      }, this.retry);
    } else {
      info = {
        version,
        size: data.byteLength,
        sha256,
        chunks: Math.max(1, Math.ceil(data.byteLength / bytesPerChunk)),
      };
      await this.writeChunks(partitionKey, name, data, info);
    }
    await this.writeHead(partitionKey, name, info);
    if (previous?.blob !== undefined) await this.deleteBlob(previous.blob);
    await this.collect(partitionKey, name);
    return info;
  }

  private async writeChunks(partitionKey: string, name: string, data: Uint8Array, info: LargeObjectInfo) {
    const { version, chunks } = info;
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
  }

  /** The switch to a new version: one write of the head row. */
  private async writeHead(partitionKey: string, name: string, info: LargeObjectInfo): Promise<void> {
    const head = {
      partitionKey,
      rowKey: this.headKey(name),
      version: { value: info.version, type: 'String' },
      size: { value: String(info.size), type: 'Int64' },
      sha256: { value: info.sha256, type: 'String' },
      chunks: { value: info.chunks, type: 'Int32' },
      ...(info.blob === undefined ? {} : { blob: { value: info.blob, type: 'String' } }),
    };
    await withRetry(() => this.client.upsertEntity(head as never, 'Replace'), this.retry);
  }

  private async deleteBlob(blob: string): Promise<void> {
    if (!this.blobs) throw new Error(`${blob}: a value kept in a blob needs the store's blobs option`);
    await withRetry(() => this.blobs!.getBlobClient(blob).deleteIfExists(), this.retry);
  }

  async info(partitionKey: string, name: string): Promise<LargeObjectInfo | undefined> {
    const head = await readRaw(this.client, partitionKey, this.headKey(name), this.retry);
    if (!head) return undefined;
    return {
      version: wireString(head.version)!,
      size: Number(wireString(head.size)),
      sha256: wireString(head.sha256)!,
      chunks: Number(wireString(head.chunks)),
      ...(head.blob === undefined ? {} : { blob: wireString(head.blob)! }),
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
    for (let round = 1; ; round++) {
      const info = await this.info(partitionKey, name);
      if (!info) return undefined;
      if (info.blob === undefined) return this.getChunks(partitionKey, name, info);
      const data = await this.getBlob(info);
      if (data !== undefined) return data;
      // The blob is gone: a newer put replaced it after the head was read, or it was lost.
      if (round >= blobReadRounds) throw new IntegrityError(`${name}: blob ${info.blob} is missing`);
    }
  }

  /** The blob's bytes, checked; undefined when there is no such blob. */
  private async getBlob(info: LargeObjectInfo): Promise<Uint8Array | undefined> {
    if (!this.blobs) throw new Error(`${info.blob}: a value kept in a blob needs the store's blobs option`);
    const data = (await readBlob(this.blobs, info.blob!, this.retry))?.content;
    if (data === undefined) return undefined;
    return checked(info, data);
  }

  private async getChunks(partitionKey: string, name: string, info: LargeObjectInfo): Promise<Uint8Array> {
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
    return checked(info, Buffer.concat(pieces), name);
  }

  /**
   * Deletes chunks of versions the head does not name (left by replaced or interrupted writes),
   * and, with the blobs option, the value's blobs the head does not name that are older than
   * `orphanGraceMs` (younger ones may belong to a put under way). Answers how many went.
   */
  async collect(partitionKey: string, name: string, nowMs = Date.now()): Promise<number> {
    const info = await this.info(partitionKey, name);
    const head = this.headKey(name);
    let removed = 0;
    for (const row of await this.chunkRows(partitionKey, name)) {
      if (row.rowKey === head) continue;
      if (info && row.rowKey.startsWith(prefixRange([text.encode(name), text.encode(info.version)]).ge)) continue;
      await deleteIfPresent(this.client, partitionKey, row.rowKey, this.retry);
      removed++;
    }
    if (!this.blobs) return removed;
    for await (const blob of this.blobs.listBlobsFlat({ prefix: this.blobPrefix(partitionKey, name) })) {
      if (blob.name === info?.blob || nowMs - blob.properties.lastModified.getTime() < this.orphanGraceMs) continue;
      await this.deleteBlob(blob.name);
      removed++;
    }
    return removed;
  }

  /** Removes the head (the object is gone from then on), then its blob and every chunk. */
  async delete(partitionKey: string, name: string): Promise<void> {
    const info = await this.info(partitionKey, name);
    await deleteIfPresent(this.client, partitionKey, this.headKey(name), this.retry);
    if (info?.blob !== undefined) await this.deleteBlob(info.blob);
    await this.collect(partitionKey, name);
  }
}

/** The bytes, if their size and SHA-256 are the head's; IntegrityError otherwise. */
function checked(info: LargeObjectInfo, data: Buffer, name = info.blob): Uint8Array {
  const sha256 = createHash('sha256').update(data).digest('hex');
  if (data.byteLength !== info.size || sha256 !== info.sha256) {
    throw new IntegrityError(
      `${name}: read ${data.byteLength} bytes with SHA-256 ${sha256}, expected ${info.size} bytes with ${info.sha256}`,
    );
  }
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}
