// Storage accounts and their keys: the well-known development account, or the accounts named
// by AZURITE_ACCOUNTS in Azurite's format, so existing emulator setups work unchanged.

export interface Account {
  readonly name: string;
  /** Base64-decoded account keys: one or two (primary, secondary). */
  readonly keys: readonly Buffer[];
}

export const devAccountName = 'devstoreaccount1';
export const devAccountKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

/** Azure's account name rule (docs/protocol-notes.md#urls-and-accounts): 3-24 lowercase letters and digits. */
const accountNamePattern = /^[a-z0-9]{3,24}$/;

/**
 * The accounts this server knows: the development account, plus those AZURITE_ACCOUNTS lists
 * (an entry for devstoreaccount1 replaces its keys). Azurite drops devstoreaccount1 when custom
 * accounts are given; we keep it, so that `UseDevelopmentStorage=true` always works (the issue asks
 * for "more accounts"). The format is Azurite's, `name:key1[:key2]` entries
 * separated by `;`; empty entries (a trailing `;`) are skipped and an empty key2 (`name:key1:`)
 * means none, as in Azurite. A key is decoded as Node.js decodes base64, as Azurite and the SDKs'
 * StorageSharedKeyCredential do: Azurite's own tests give keys such as `testing_key`, which are not
 * standard base64 but sign and verify alike on both sides. Unlike Azurite, which logs and falls back
 * to the development account, a malformed variable throws: a typo should stop the server, not
 * silently change its accounts.
 */
export function loadAccounts(azuriteAccounts: string | undefined): ReadonlyMap<string, Account> {
  const text = azuriteAccounts?.trim() ?? '';
  const accounts = new Map<string, Account>();
  for (const entry of text.split(';')) {
    if (entry.trim() === '') continue;
    const account = parseAccount(entry.trim());
    if (accounts.has(account.name)) throw accountsError(`account '${account.name}' is listed twice`);
    accounts.set(account.name, account);
  }
  if (!accounts.has(devAccountName)) {
    accounts.set(devAccountName, { name: devAccountName, keys: [Buffer.from(devAccountKey, 'base64')] });
  }
  return accounts;
}

function parseAccount(entry: string): Account {
  const [name = '', ...keyTexts] = entry.split(':');
  if (keyTexts.at(-1) === '' && keyTexts.length === 2) keyTexts.pop();
  if (keyTexts.length < 1 || keyTexts.length > 2) {
    throw accountsError(`entry for '${name}' must be name:key1 or name:key1:key2`);
  }
  if (!accountNamePattern.test(name)) {
    throw accountsError(`account name '${name}' must be 3-24 lowercase letters or digits`);
  }
  return { name, keys: keyTexts.map((keyText, i) => decodeKey(name, keyText, i + 1)) };
}

/** The key's bytes as the SDKs decode the key they sign with (Buffer.from, base64 or base64url, lenient). */
function decodeKey(name: string, keyText: string, keyNumber: number): Buffer {
  const key = Buffer.from(keyText, 'base64');
  if (key.length === 0) throw accountsError(`key${keyNumber} of account '${name}' decodes to no bytes (base64)`);
  return key;
}

function accountsError(reason: string): Error {
  return new Error(`AZURITE_ACCOUNTS is malformed: ${reason} (format: name:key1[:key2];name2:key1…)`);
}
