// The decision part of a transactional commit (commit.ts), without the database: given the
// writes and the stored versions of their entities (locked by the transaction), either the first
// write that fails and why, or the rows to insert, update and delete.
import type { WriteFailure, Write } from '../table-store.js';
import { conditionFailure, mergeProperties } from '../write.js';
import { encodeIncoming, encodeKey, encodeProperties, storedEntity, type EncodedProperties } from './codec.js';

/** An entity as the transaction found it, locked. */
export interface StoredVersion {
  readonly ts: bigint;
  /** The stored JSON form and jsonb text (codec.ts); both null when the lock did not read them (no merge). */
  readonly doc: string | null;
  readonly props: string | null;
}

/** A write's row: its keys as stored (codec.ts encodeKey), and what it writes there. */
export interface PlannedRow {
  readonly pk: Buffer;
  readonly rk: Buffer;
  readonly properties: EncodedProperties;
}

export type CommitPlan =
  | { readonly ok: false; readonly index: number; readonly failure: WriteFailure }
  | {
      readonly ok: true;
      readonly inserts: readonly PlannedRow[];
      readonly updates: readonly PlannedRow[];
      readonly deletes: readonly Omit<PlannedRow, 'properties'>[];
      /** The latest version the commit replaces (0n: none): its Timestamp must come after it. */
      readonly newestReplacedTs: bigint;
    };

/** The key of a stored entity in the map planCommit is given. */
export function storedKey(pk: Buffer, rk: Buffer): string {
  return `${pk.toString('hex')}:${rk.toString('hex')}`;
}

/** What `writes` do to the entities `stored` (by storedKey; an absent one is not stored). */
export function planCommit(writes: readonly Write[], stored: ReadonlyMap<string, StoredVersion>): CommitPlan {
  const inserts: PlannedRow[] = [];
  const updates: PlannedRow[] = [];
  const deletes: Omit<PlannedRow, 'properties'>[] = [];
  let newestReplacedTs = 0n;
  for (const [index, write] of writes.entries()) {
    const pk = encodeKey(write.partitionKey);
    const rk = encodeKey(write.rowKey);
    const current = stored.get(storedKey(pk, rk));
    if (current !== undefined && current.ts > newestReplacedTs) newestReplacedTs = current.ts;
    const failure = conditionFailure(current?.ts, write.condition);
    if (failure !== undefined) return { ok: false, index, failure };
    const { action } = write;
    if (action.kind === 'delete') {
      if (current === undefined) return { ok: false, index, failure: 'notFound' };
      deletes.push({ pk, rk });
      continue;
    }
    const properties =
      action.kind === 'merge' && current !== undefined
        ? mergedProperties(write, action, current)
        : encodeIncoming(action);
    if (typeof properties === 'string') return { ok: false, index, failure: properties };
    (current === undefined ? inserts : updates).push({ pk, rk, properties });
  }
  return { ok: true, inserts, updates, deletes, newestReplacedTs };
}

/** A merge into the stored entity `current`, or the limit the merged entity would pass. */
function mergedProperties(
  write: Write,
  action: Write['action'] & { kind: 'merge' },
  current: StoredVersion,
): EncodedProperties | 'entityTooLarge' | 'tooManyProperties' {
  const stored = storedEntity(write.partitionKey, write.rowKey, current.ts, current.doc, current.props);
  const merged = mergeProperties(write, stored.properties, action.properties);
  return typeof merged === 'string' ? merged : encodeProperties(merged);
}
