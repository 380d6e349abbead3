// What both engines' queue stores share: messages and metadata in their stored form, and the
// checks on the instants the service passes in.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { MessageClaim, StoredMessage } from './queue-store.js';

/** A message row as either engine returns it (PostgreSQL answers bigint columns as strings). */
export interface MessageRow {
  readonly id: string;
  readonly text: string;
  readonly inserted_ms: number | string;
  /** Null: never expires. */
  readonly expires_ms: number | string | null;
  readonly visible_ms: number | string;
  readonly dequeue_count: number | string;
  readonly pop_receipt: string;
}

export function storedMessage(row: MessageRow): StoredMessage {
  return {
    id: row.id,
    text: row.text,
    insertedMs: Number(row.inserted_ms),
    expiresMs: row.expires_ms === null ? Number.POSITIVE_INFINITY : Number(row.expires_ms),
    visibleMs: Number(row.visible_ms),
    dequeueCount: Number(row.dequeue_count),
    popReceipt: row.pop_receipt,
  };
}

/** The stored form of an expiry instant: null for one that never comes. */
export function storedExpiry(expiresMs: number): number | null {
  if (expiresMs === Number.POSITIVE_INFINITY) return null;
  assertInstant(expiresMs, 'expiresMs');
  return expiresMs;
}

/** Instants are whole milliseconds since the epoch (both engines keep them as 64-bit integers). */
export function assertInstant(ms: number, what: string): void {
  assert(Number.isSafeInteger(ms), `${what} is a whole number of milliseconds: ${ms}`);
}

/** A get's claim, as both engines check it before they claim anything. */
export function assertClaim({ count, nowMs, visibleMs }: MessageClaim): void {
  assert(Number.isSafeInteger(count) && count >= 1, 'a get claims at least one message');
  assertInstant(nowMs, 'nowMs');
  assertInstant(visibleMs, 'visibleMs');
}

/** A pop receipt no earlier one of the message can equal. */
export function newPopReceipt(): string {
  return randomUUID();
}

/** Metadata in its stored form: a JSON array of [name, value] pairs, in the order given. */
export function encodeMetadata(metadata: ReadonlyMap<string, string>): string {
  return JSON.stringify([...metadata]);
}

export function decodeMetadata(stored: string): Map<string, string> {
  return new Map(JSON.parse(stored) as [string, string][]);
}
