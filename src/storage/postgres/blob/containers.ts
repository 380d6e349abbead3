// The Blob store's container records on PostgreSQL. A conditional update or delete is one
// statement whose WHERE names the ETag: two of them on one ETag meet at the row lock, and the
// second, re-checking the row the first changed, applies to nothing. A miss is explained (no
// container, or another ETag) by a second read.
import assert from 'node:assert/strict';
import type {
  BlobStore,
  ContainerKeep,
  ContainerRecord,
  IfEtag,
  RestoreOutcome,
  WriteOutcome,
} from '../../blob-store.js';
import { containerIdOfVersion, containerVersion, deletedListStart } from '../../container-soft-delete.js';
import { named } from './statements.js';
import type { PostgresConnection } from '../connection.js';
import { schemaName as s } from '../schema.js';

const columns = 'name, etag, last_modified_ms, state';
const createSql = `INSERT INTO ${s}.blob_containers (account, name, etag, last_modified_ms, state)
  VALUES ($1, $2, $3, $4, $5) ON CONFLICT (account, name) DO NOTHING`;
const getSql = `SELECT ${columns} FROM ${s}.blob_containers WHERE account = $1 AND name = $2`;
const listSql = `SELECT ${columns} FROM ${s}.blob_containers
  WHERE account = $1 AND name >= $2 AND ($3::text IS NULL OR name < $3) ORDER BY name LIMIT $4`;
const updateSql = `UPDATE ${s}.blob_containers SET etag = $3, last_modified_ms = $4, state = $5
  WHERE account = $1 AND name = $2 AND ($6::text IS NULL OR etag = $6)`;
// One row, whatever the container holds: its account set to null, no lookup finds it and its name is
// free; its blobs, blocks and staged blocks go later, in batches (postgres/blob/container-reclaim.ts). Setting
// a column of the unique key locks the row FOR UPDATE, so it waits for the writes in it (which hold
// it FOR KEY SHARE, postgres/blob/writes.ts); a write that comes after finds no container.
// Kept (container soft delete, container-soft-delete.ts), the row remembers its account in
// deleted_account, and reclaim leaves it be until it expired.
const deleteSql = `UPDATE ${s}.blob_containers SET account = NULL, deleted_account = $4, deleted_ms = $5, expires_ms = $6
  WHERE account = $1 AND name = $2 AND ($3::text IS NULL OR etag = $3)`;
const deletedColumns = `id, ${columns}, deleted_ms, expires_ms`;
const listDeletedSql = `SELECT ${deletedColumns} FROM ${s}.blob_containers
  WHERE deleted_account = $1 AND (name, id) >= ($2, $3) AND ($4::text IS NULL OR name < $4) ORDER BY name, id LIMIT $5`;
// The name must be free: a row of it is checked here, and one created meanwhile fails the unique key.
const restoreSql = `UPDATE ${s}.blob_containers SET account = $1, deleted_account = NULL, deleted_ms = NULL,
    expires_ms = NULL, etag = $4, last_modified_ms = $5, state = $6
  WHERE id = $3 AND deleted_account = $1 AND name = $2
    AND NOT EXISTS (SELECT 1 FROM ${s}.blob_containers WHERE account = $1 AND name = $2)`;
const keptSql = `SELECT 1 FROM ${s}.blob_containers WHERE id = $3 AND deleted_account = $1 AND name = $2`;
const uniqueViolation = '23505';

/** bigint columns arrive as text. */
interface ContainerRow {
  readonly name: string;
  readonly etag: string;
  readonly last_modified_ms: string;
  readonly state: string;
}

interface DeletedRow extends ContainerRow {
  readonly id: string;
  readonly deleted_ms: string;
  readonly expires_ms: string;
}

const containerRecord = (row: ContainerRow): ContainerRecord => ({
  name: row.name,
  etag: row.etag,
  lastModifiedMs: Number(row.last_modified_ms),
  state: row.state,
});

export class ContainerStatements {
  constructor(private readonly connection: PostgresConnection) {}

  async create(account: string, record: ContainerRecord): Promise<boolean> {
    const values = [account, record.name, record.etag, record.lastModifiedMs, record.state];
    const { rowCount } = await this.connection.query('write', named(createSql, values));
    return rowCount === 1;
  }

  async get(account: string, name: string): Promise<ContainerRecord | undefined> {
    const { rows } = await this.connection.query<ContainerRow>('read', named(getSql, [account, name]));
    return rows[0] && containerRecord(rows[0]);
  }

  async list(account: string, prefix: string, fromName: string | undefined, limit: number): Promise<ContainerRecord[]> {
    assert(Number.isSafeInteger(limit) && limit >= 0, 'a list limit is a count');
    const start = fromName !== undefined && fromName > prefix ? fromName : prefix;
    // The prefix's range ends before the prefix followed by the largest character.
    const values = [account, start, prefix === '' ? null : `${prefix}\u{10FFFF}`, limit];
    const { rows } = await this.connection.query<ContainerRow>('read', named(listSql, values));
    return rows.map(containerRecord);
  }

  async update(account: string, record: ContainerRecord, ifEtag: IfEtag): Promise<WriteOutcome> {
    if (ifEtag === null) return this.whyMissed(account, record.name);
    const values = [account, record.name, record.etag, record.lastModifiedMs, record.state, ifEtag ?? null];
    const { rowCount } = await this.connection.query('write', named(updateSql, values));
    return rowCount === 1 ? 'ok' : this.whyMissed(account, record.name);
  }

  async delete(account: string, name: string, ifEtag: IfEtag, keep?: ContainerKeep): Promise<WriteOutcome> {
    if (ifEtag === null) return this.whyMissed(account, name);
    const kept = keep === undefined ? [null, null, null] : [account, keep.deletedMs, keep.expiresMs];
    const { rowCount } = await this.connection.query(
      'write',
      named(deleteSql, [account, name, ifEtag ?? null, ...kept]),
    );
    return rowCount === 1 ? 'ok' : this.whyMissed(account, name);
  }

  readonly listDeleted: BlobStore['listDeletedContainers'] = async (account, prefix, from, limit) => {
    assert(Number.isSafeInteger(limit) && limit >= 0, 'a list limit is a count');
    const start = deletedListStart(prefix, from);
    const end = prefix === '' ? null : `${prefix}\u{10FFFF}`;
    const values = [account, start.name, start.id.toString(), end, limit];
    const { rows } = await this.connection.query<DeletedRow>('read', named(listDeletedSql, values));
    return rows.map((row) => ({
      ...containerRecord(row),
      version: containerVersion(row.id),
      deletedMs: Number(row.deleted_ms),
      expiresMs: Number(row.expires_ms),
    }));
  };

  async restore(account: string, version: string, record: ContainerRecord): Promise<RestoreOutcome> {
    const id = containerIdOfVersion(version);
    if (id === undefined) return 'notFound';
    const key = [account, record.name, id.toString()];
    const values = [...key, record.etag, record.lastModifiedMs, record.state];
    try {
      const { rowCount } = await this.connection.query('write', named(restoreSql, values));
      if (rowCount === 1) return 'ok';
    } catch (error) {
      if ((error as { code?: string }).code !== uniqueViolation) throw error;
    }
    const { rows } = await this.connection.query('read', named(keptSql, key));
    return rows.length === 0 ? 'notFound' : 'containerExists';
  }

  /** Why a write conditioned on the container applied to nothing, as of now. */
  private async whyMissed(account: string, name: string): Promise<WriteOutcome> {
    return (await this.get(account, name)) === undefined ? 'containerNotFound' : 'etagMismatch';
  }
}
