// Table ACLs: the stored access policies of Get/Set Table ACL (Azure REST: get-table-acl) and the lookup a
// service SAS with `si` makes on every request, so that changing or removing a policy takes effect
// at once (Azure REST: create-service-sas). The XML body is src/wire/acl-xml.ts.
import { StorageError } from '../../errors.js';
import type { SignedIdentifier } from '../../domain/signed-identifier.js';
import type { TableStore } from '../../storage/table-store.js';

export class AclService {
  constructor(private readonly store: TableStore) {}

  /** The table's policies in the order they were set; 404 TableNotFound without the table. */
  async get(account: string, table: string): Promise<SignedIdentifier[]> {
    await this.requireTable(account, table);
    return (await this.stored(account, table)) ?? [];
  }

  /** Replaces the whole set (Azure REST: set-table-acl). */
  async set(account: string, table: string, identifiers: readonly SignedIdentifier[]): Promise<void> {
    const document = identifiers.length === 0 ? undefined : JSON.stringify(identifiers);
    // The store writes it only while the table exists, so a table deleted meanwhile keeps nothing.
    if (
      (await this.store.putSettings(account, [{ key: { scope: 'table', table }, value: document }])) === 'tableNotFound'
    ) {
      throw new StorageError('TableNotFound');
    }
  }

  /** The policy `id` of the table, or undefined (also when the table is gone). */
  async findPolicy(account: string, table: string, id: string): Promise<SignedIdentifier | undefined> {
    return (await this.stored(account, table))?.find((identifier) => identifier.id === id);
  }

  private async stored(account: string, table: string): Promise<SignedIdentifier[] | undefined> {
    const document = await this.store.getSetting(account, { scope: 'table', table });
    return document === undefined ? undefined : (JSON.parse(document) as SignedIdentifier[]);
  }

  private async requireTable(account: string, table: string): Promise<void> {
    if ((await this.store.getTable(account, table)) === undefined) throw new StorageError('TableNotFound');
  }
}
