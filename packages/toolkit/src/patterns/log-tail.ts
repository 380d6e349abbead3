// Log tail (design guide): rows keyed by inverted ticks sort newest first, so "the latest n" is
// the first page of a partition query, with no scan of older rows.
import { randomUUID } from 'node:crypto';
import { codecs } from '../keys.js';
import { defineModel, type Model, type Stored } from '../model.js';
import { keys } from '../filter.js';
import type { Infer, Schema } from '../schema.js';
import { t } from '../schema.js';
import type { ModelTable } from '../table.js';

/**
 * A model for an append-only stream: PartitionKey = the stream, RowKey = inverted ticks of `at`
 * then a unique id (two events in one millisecond both fit, and order among them is arbitrary).
 */
export function logTailModel<S extends Schema>(kind: string, schema: S) {
  const full = { stream: t.string(), at: t.dateTime(), id: t.string(), ...schema };
  return defineModel({
    kind,
    schema: full,
    partitionKey: ['stream'],
    rowKey: [{ field: 'at', codec: codecs.invertedTicks() }, 'id'],
  });
}

/** A fresh id for an event (keeps two events of one millisecond apart). */
export const newEventId = (): string => randomUUID();

/** The newest `count` entities of a partition: one query, the first page only. */
export async function newest<S extends Schema>(
  table: ModelTable<S>,
  partitionValues: Partial<Infer<S>>,
  count: number,
): Promise<Stored<Infer<S>>[]> {
  const model: Model<S> = table.model;
  const filter = keys.partitionKey('eq', model.partitionKey.encode(partitionValues));
  for await (const page of table.pages({ filter, pageSize: count })) {
    if (page.items.length > 0 || page.continuationToken === undefined) return page.items.slice(0, count);
  }
  return [];
}

/** Entities of a partition newer than `since` (RowKey below the inverted ticks of `since`). */
export async function newerThan<S extends Schema>(
  table: ModelTable<S>,
  partitionValues: Partial<Infer<S>>,
  since: Date,
): Promise<Stored<Infer<S>>[]> {
  const filter = keys
    .partitionKey('eq', table.model.partitionKey.encode(partitionValues))
    .and(keys.rowKey('lt', codecs.invertedTicks().encode(since)));
  return table.list({ filter });
}
