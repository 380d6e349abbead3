// Settings on PostgreSQL (table-store.ts SettingKey): an account's by name, a table's beside its row,
// written only while the table exists (the foreign key, and its row locked FOR KEY SHARE).
import type pg from 'pg';
import type { SettingChange, SettingKey } from '../table-store.js';
import { storableName } from './codec.js';
import type { PostgresConnection } from './connection.js';
import {
  deleteAccountSettingSql,
  deleteTableSettingSql,
  getAccountSettingSql,
  getTableSettingSql,
  lockTableOnlySql,
  putAccountSettingSql,
  putTableSettingSql,
} from './sql.js';

export async function getSetting(
  connection: PostgresConnection,
  account: string,
  key: SettingKey,
): Promise<string | undefined> {
  if (key.scope === 'table' && !storableName(key.table)) return undefined;
  const statement =
    key.scope === 'table'
      ? { ...getTableSettingSql, values: [account, key.table.toLowerCase()] }
      : { ...getAccountSettingSql, values: [account, key.name] };
  const { rows } = await connection.query<{ value: string }>('read', statement);
  return rows[0] === undefined ? undefined : decodeSettingValue(rows[0].value);
}

/** Every change in one transaction; 'tableNotFound' (nothing written) when a table setting's table does not exist. */
export async function putSettings(
  connection: PostgresConnection,
  account: string,
  changes: readonly SettingChange[],
): Promise<'ok' | 'tableNotFound'> {
  if (changes.some(({ key }) => key.scope === 'table' && !storableName(key.table))) return 'tableNotFound';
  return connection.transaction(
    async (client) => {
      for (const change of changes)
        if ((await putSetting(client, account, change)) === 'tableNotFound') return 'tableNotFound';
      return 'ok';
    },
    (outcome) => outcome === 'ok',
    'tableNotFound',
  );
}

async function putSetting(
  client: pg.PoolClient,
  account: string,
  { key, value }: SettingChange,
): Promise<'ok' | 'tableNotFound'> {
  const stored = value === undefined ? undefined : encodeSettingValue(value);
  if (key.scope === 'account') {
    await client.query(
      stored === undefined
        ? { ...deleteAccountSettingSql, values: [account, key.name] }
        : { ...putAccountSettingSql, values: [account, key.name, stored] },
    );
    return 'ok';
  }
  const { rows } = await client.query<{ id: string }>({
    ...lockTableOnlySql,
    values: [account, key.table.toLowerCase()],
  });
  const tableId = rows[0]?.id;
  if (tableId === undefined) return 'tableNotFound';
  await client.query(
    stored === undefined
      ? { ...deleteTableSettingSql, values: [tableId] }
      : { ...putTableSettingSql, values: [tableId, stored] },
  );
  return 'ok';
}

/**
 * A value PostgreSQL text cannot hold (U+0000; an unpaired surrogate, which the driver would
 * replace) is stored as this marker and the base64 of its UTF-16LE code units. The values the
 * service keeps are JSON texts, which never start with a control character, so no stored value
 * is mistaken for an encoded one.
 */
const encodedMarker = '\u0001utf16:';
const textUnsafe = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function encodeSettingValue(value: string): string {
  if (!textUnsafe.test(value) && !value.startsWith(encodedMarker)) return value;
  return encodedMarker + Buffer.from(value, 'utf16le').toString('base64');
}

export function decodeSettingValue(stored: string): string {
  if (!stored.startsWith(encodedMarker)) return stored;
  return Buffer.from(stored.slice(encodedMarker.length), 'base64').toString('utf16le');
}
