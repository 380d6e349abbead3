// What the queue conformance suite's cases share: how an engine under test is handed over, new
// messages in short form, and results unwrapped with their failure in the assertion message.
import assert from 'node:assert/strict';
import type { MessageResult, NewMessage, QueueStore, StoredMessage } from '../../../src/storage/queue-store.js';

/** An engine handed to the suite: a fresh, empty store and how to dispose of it. */
export interface QueueStoreUnderTest {
  readonly store: QueueStore;
  /**
   * Another view of the same data, as a second server process has it (PostgreSQL: a store with a
   * pool of its own); the same store where the engine serves one process (SQLite).
   */
  readonly second: QueueStore;
  /** Closes the store(s) and removes whatever they kept. */
  close(): Promise<void>;
  /** Closes the store and opens the same data again; absent for engines that keep nothing. */
  reopen?(): Promise<QueueStore>;
}

export type QueueStoreFactory = () => Promise<QueueStoreUnderTest>;

/** An instant well inside the range of both engines, for times the cases make up. */
export const t0 = 1_800_000_000_000;
export const never = Number.POSITIVE_INFINITY;

let nextId = 0;

/** A new message visible at `visibleMs` (default t0) that expires at `expiresMs` (default never). */
export function message(
  text: string,
  options: { visibleMs?: number; expiresMs?: number; insertedMs?: number } = {},
): NewMessage {
  const insertedMs = options.insertedMs ?? t0;
  return {
    id: `m${(nextId++).toString().padStart(6, '0')}-${Math.random().toString(36).slice(2, 10)}`,
    text,
    insertedMs,
    visibleMs: options.visibleMs ?? insertedMs,
    expiresMs: options.expiresMs ?? never,
  };
}

export function ok<T>(result: MessageResult<T>, what = 'expected success'): T {
  assert.ok(result.ok, `${what}: got ${result.ok ? '' : result.failure}`);
  return result.value;
}

export function failure(result: MessageResult<unknown>): string {
  assert.ok(!result.ok, `expected a failure, got ${JSON.stringify(result)}`);
  return result.failure;
}

/** Puts every message and answers them as stored. */
export async function putAll(
  store: QueueStore,
  account: string,
  name: string,
  messages: readonly NewMessage[],
): Promise<StoredMessage[]> {
  const stored: StoredMessage[] = [];
  for (const each of messages) stored.push(ok(await store.putMessage(account, name, each)));
  return stored;
}

export const ids = (messages: readonly { readonly id: string }[]): string[] => messages.map((each) => each.id);
export const texts = (messages: readonly { readonly text: string }[]): string[] => messages.map((each) => each.text);
