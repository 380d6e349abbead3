// Request bodies: ~500-byte entities carrying every EDM type, and $batch bodies shaped
// exactly as @azure/data-tables sends them (Azure REST: performing-entity-group-transactions). Deterministic from a
// seed.
import { randomUUID } from 'node:crypto';

/** Distinct values of the Int32 `Bucket` property that the table-scan filter selects on. */
export const bucketCount = 1000;

const tailVariants = 256;
const nameFiller = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const epochMs = Date.UTC(2024, 0, 1);

/** The part of an entity that cycles through a few variants, built once each. */
const tails: readonly string[] = Array.from({ length: tailVariants }, (_, variant) => {
  const bytes = Buffer.alloc(64, variant);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (variant * 31 + i * 7) & 0xff;
  const hex = bytes.toString('hex');
  const guid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  const created = new Date(epochMs + variant * 86_400_123).toISOString();
  return (
    `"Price":${(variant * 1.25 + 0.125).toFixed(3)},` +
    `"Active":${variant % 2 === 0},` +
    `"Created@odata.type":"Edm.DateTime","Created":"${created}",` +
    `"Id@odata.type":"Edm.Guid","Id":"${guid}",` +
    `"Blob@odata.type":"Edm.Binary","Blob":"${bytes.toString('base64')}"`
  );
});

/** Properties after the keys; `Bucket` is `seed % bucketCount`. */
export function entityProperties(seed: number): string {
  const offset = seed % nameFiller.length;
  const name = `customer ${seed} ` + nameFiller.slice(offset) + nameFiller.slice(0, offset);
  const counter = BigInt(seed) * 1_000_003n + 4_294_967_296n;
  return (
    `"Name":"${name}","Bucket":${seed % bucketCount},` +
    `"Counter@odata.type":"Edm.Int64","Counter":"${counter}",` +
    tails[seed % tailVariants]
  );
}

/** Keys must be plain URL-safe text (the benchmark only makes such keys). */
export function entityJson(partitionKey: string, rowKey: string, seed: number): string {
  return `{"PartitionKey":"${partitionKey}","RowKey":"${rowKey}",${entityProperties(seed)}}`;
}

export interface BatchInsert {
  rowKey: string;
  seed: number;
}

/** A change set of inserts into one partition, as the JS SDK writes it. */
export function batchInsertBody(
  tableUrl: string,
  partitionKey: string,
  inserts: readonly BatchInsert[],
): { contentType: string; body: string } {
  const batchBoundary = `batch_${randomUUID()}`;
  const changesetBoundary = `changeset_${randomUUID()}`;
  const parts = inserts.map(
    (insert) =>
      `--${changesetBoundary}\r\n` +
      'content-type: application/http\r\n' +
      'content-transfer-encoding: binary\r\n' +
      '\r\n' +
      `POST ${tableUrl} HTTP/1.1\r\n` +
      'Content-Type: application/json;odata=nometadata\r\n' +
      'Accept: application/json;odata=minimalmetadata\r\n' +
      'DataServiceVersion: 3.0\r\n' +
      'Prefer: return-no-content\r\n' +
      '\r\n' +
      '\r\n' +
      `${entityJson(partitionKey, insert.rowKey, insert.seed)}\r\n`,
  );
  const body =
    `--${batchBoundary}\r\n` +
    `content-type: multipart/mixed; boundary=${changesetBoundary}\r\n` +
    '\r\n' +
    '\r\n' +
    parts.join('') +
    `--${changesetBoundary}--\r\n` +
    `--${batchBoundary}--\r\n`;
  return { contentType: `multipart/mixed; boundary=${batchBoundary}`, body };
}

/** Outer headers of a JS SDK $batch besides the signed ones (Azure REST: performing-entity-group-transactions). */
export const batchHeaders: Readonly<Record<string, string>> = {
  accept: 'application/json',
  DataServiceVersion: '3.0;',
  MaxDataServiceVersion: '3.0;NetFx',
  'Accept-Charset': 'UTF-8',
};

/** A change-set response reports a failed operation as a part whose status is not 2xx. */
export function batchResponseFailure(body: string): string | undefined {
  const match = /HTTP\/1\.1 [345]\d\d[^\r\n]*/.exec(body);
  return match?.[0];
}

export function padded(value: number, width: number): string {
  return String(value).padStart(width, '0');
}
