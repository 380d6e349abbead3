// The tables of an account in an account backup file: a table record, then one entity record per
// entity holding the entity as `cerulean export` writes it (every property annotated, so every
// value comes back exactly), read page by page; and back, in entity group transactions.
import type { TableServiceClient } from '@azure/data-tables';
import type { BackupWriter } from './account-backup.js';
import { CliError } from './command.js';
import type { Endpoint } from './endpoint.js';
import { decodeJsonLine, encodeJsonLine } from './formats/jsonl.js';
import type { RejectsFile } from './rejects.js';
import { withRetries } from './retry.js';
import { scanPages } from './scan.js';
import { tableError } from './service-errors.js';
import { EntityWriter } from './writer.js';

export interface TableRecord {
  readonly kind: 'table';
  readonly name: string;
}

export interface EntityRecord {
  readonly kind: 'entity';
  readonly table: string;
  /**
   * The entity as one line of `cerulean export` (docs/cli.md, Formats), as text: parsed and written
   * again, a number literal could change (-0.0 would lose its sign).
   */
  readonly line: string;
}

/** Every table name of the account. */
export async function listTableNames(endpoint: Endpoint): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const table of endpoint.service().listTables()) names.push(table.name!);
  } catch (error) {
    throw tableError(error, endpoint.label);
  }
  return names;
}

/** Writes one table and its entities; answers how many entities. */
export async function backupTable(endpoint: Endpoint, writer: BackupWriter, name: string): Promise<number> {
  await writer.record({ kind: 'table', name });
  let entities = 0;
  try {
    for await (const page of scanPages(endpoint.tableClient(name))) {
      for (const row of page) {
        await writer.record({ kind: 'entity', table: name, line: encodeJsonLine(row) });
        entities++;
      }
    }
  } catch (error) {
    throw tableError(error, name);
  }
  return entities;
}

/** Restores the tables of a backup file one after the other, as their records come. */
export class TableRestorer {
  private writer: EntityWriter | undefined;
  private table: string | undefined;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly rejects: RejectsFile,
    private readonly replace: boolean,
  ) {}

  get stored(): number {
    return this.writer?.stored ?? 0;
  }

  /** Finishes the table before, then creates this one (refused if it exists, unless replacing). */
  async startTable(name: string): Promise<number> {
    const stored = await this.finish();
    const created = await createTable(this.endpoint.service(false), name);
    if (!created && !this.replace)
      throw new CliError(`table ${name} exists at ${this.endpoint.label}: delete it first, or give --replace`);
    this.table = name;
    this.writer = new EntityWriter(this.endpoint.tableClient(name, false), 'upsert', this.rejects);
    return stored;
  }

  async entity(record: EntityRecord): Promise<void> {
    if (this.writer === undefined || record.table !== this.table)
      throw new CliError(`an entity of table ${record.table} outside its table's records`);
    try {
      await this.writer.add(decodeJsonLine(record.line), undefined, record.line);
    } catch (error) {
      throw tableError(error, record.table);
    }
  }

  /** Sends what is held of the current table; answers how many of its entities were stored. */
  async finish(): Promise<number> {
    if (this.writer === undefined) return 0;
    try {
      await this.writer.finish();
    } catch (error) {
      throw tableError(error, this.table!);
    }
    const stored = this.writer.stored;
    this.writer = undefined;
    return stored;
  }
}

/** Creates the table: true, or false if it exists (the SDK swallows that 409 and reports it only to onResponse). */
async function createTable(service: TableServiceClient, name: string): Promise<boolean> {
  let existed = false;
  try {
    await withRetries(() =>
      service.createTable(name, { onResponse: (response) => void (existed ||= response.status === 409) }),
    );
  } catch (error) {
    throw tableError(error, name);
  }
  return !existed;
}
