// What the whole page shares: the credentials in use and the status line. The key lives in this
// tab's sessionStorage only (gone when the tab closes), never in the URL, localStorage or a log.
import type { Credentials } from './api.js';
import { byId } from './dom.js';

export const devAccount = 'devstoreaccount1';
/** The well-known development key, public by design (Azure REST: authorize-with-shared-key). */
export const devKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

const keyStorageName = (account: string) => `cerulean-explorer-key:${account}`;

export function rememberedKey(account: string): string {
  return sessionStorage.getItem(keyStorageName(account)) ?? (account === devAccount ? devKey : '');
}

export function rememberKey(credentials: Credentials): void {
  sessionStorage.setItem(keyStorageName(credentials.account), credentials.key);
  sessionStorage.setItem('cerulean-explorer-account', credentials.account);
}

export function rememberedAccount(): string | null {
  return sessionStorage.getItem('cerulean-explorer-account');
}

/** Shows a message in the status line; errors stay until the next message. */
export function status(message: string, kind: 'info' | 'error' = 'info'): void {
  const line = byId('status');
  line.textContent = message;
  line.className = kind;
}

/** Empties the status line: what it said belonged to the tab the user left. */
export function clearStatus(): void {
  status('');
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs an action, reporting its failure in the status line; resolves to undefined on failure. */
export async function attempt<T>(action: () => Promise<T>): Promise<T | undefined> {
  try {
    return await action();
  } catch (error) {
    status(errorMessage(error), 'error');
    return undefined;
  }
}

/** Runs an action whose result is not needed: true when it succeeded, false after reporting why not. */
export async function succeeded(action: () => Promise<unknown>): Promise<boolean> {
  try {
    await action();
    return true;
  } catch (error) {
    status(errorMessage(error), 'error');
    return false;
  }
}
