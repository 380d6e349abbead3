// Table operations: naming rules, case-insensitive uniqueness, listing with continuation.
import { StorageError } from '../../errors.js';
import { pageSizeMax, tableNameLengthMax } from '../../limits.js';
import { compileTableFilter } from '../query/index.js';
import type { TableStore, TableInfo } from '../../storage/table-store.js';

// A letter, then letters and digits: 3 to tableNameLengthMax characters (Azure REST:
// understanding-the-table-service-data-model).
const tableNamePattern = new RegExp(`^[A-Za-z][A-Za-z0-9]{2,${tableNameLengthMax - 1}}$`);

/**
 * Azure REST: understanding-the-table-service-data-model; reserved `tables` → 400 InvalidResourceName (recommendation,
 * unverified).
 */
export function validateTableName(name: string): void {
  if (!tableNamePattern.test(name) || name.toLowerCase() === 'tables') {
    throw new StorageError('InvalidResourceName');
  }
}

/** Whether `name` may name a table at all (others name none: 404 TableNotFound). */
export function mayNameTable(name: string): boolean {
  return tableNamePattern.test(name);
}

/** The table as created (its stored case), or 404 TableNotFound. */
export async function requireTable(store: TableStore, account: string, name: string): Promise<TableInfo> {
  const table = mayNameTable(name) ? await store.getTable(account, name) : undefined;
  if (table === undefined) throw new StorageError('TableNotFound');
  return table;
}

export interface TablePage {
  readonly tables: readonly TableInfo[];
  /** Lower-cased name of the first table not returned, when more remain. */
  readonly nextTableName: string | undefined;
}

export class TableService {
  constructor(private readonly store: TableStore) {}

  async create(account: string, name: string): Promise<TableInfo> {
    validateTableName(name);
    if ((await this.store.createTable(account, name)) === 'exists') throw new StorageError('TableAlreadyExists');
    return { account, name };
  }

  async delete(account: string, name: string): Promise<void> {
    if (!(await this.store.deleteTable(account, name))) throw new StorageError('TableNotFound');
  }

  /** The table as created (its stored case), or 404 TableNotFound. */
  get(account: string, name: string): Promise<TableInfo> {
    return requireTable(this.store, account, name);
  }

  /** One page of Query Tables: tables in lower-cased name order from `nextTableName`, filtered. */
  async query(
    account: string,
    filter: string | undefined,
    top: number | undefined,
    nextTableName: string | undefined,
  ): Promise<TablePage> {
    const matches = compileTableFilter(filter);
    const pageSize = top ?? pageSizeMax;
    const tables: TableInfo[] = [];
    let from = nextTableName;
    for (;;) {
      // One more than a chunk tells whether another chunk follows.
      const chunk = await this.store.listTables(account, from, pageSizeMax + 1);
      const more = chunk.length > pageSizeMax;
      for (const table of more ? chunk.slice(0, pageSizeMax) : chunk) {
        if (tables.length === pageSize) return { tables, nextTableName: table.name.toLowerCase() };
        if (matches(table.name)) tables.push(table);
      }
      if (!more) return { tables, nextTableName: undefined };
      from = chunk[pageSizeMax]!.name.toLowerCase();
      if (tables.length === pageSize) return { tables, nextTableName: from };
    }
  }
}
