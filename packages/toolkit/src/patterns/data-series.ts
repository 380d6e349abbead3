// Data series (design guide): the values of a series over one period are properties of one
// entity (e.g. 24 hourly values of a day), so a day is written by merges that touch one row and
// read by one point read, instead of one row per sample.
import type { TableClient } from '@azure/data-tables';
import { codecs, joinComponents } from '../keys.js';
import { limits, validateEntity } from '../limits.js';
import { wireString } from '../model.js';
import { defaultRetryPolicy, withRetry, type RetryPolicy } from '../retry.js';
import { readRaw } from '../table.js';

export interface SeriesLayout {
  /** Length of the period one row holds, e.g. a day. */
  periodMs: number;
  /** Length of one slot, e.g. an hour: periodMs / slotMs properties per row (at most 250). */
  slotMs: number;
}

export const hourlyPerDay: SeriesLayout = { periodMs: 86_400_000, slotMs: 3_600_000 };

export class DataSeries {
  private readonly slots: number;
  private readonly retry: RetryPolicy;

  constructor(
    readonly client: TableClient,
    readonly layout: SeriesLayout = hourlyPerDay,
    options: { retry?: RetryPolicy } = {},
  ) {
    this.slots = layout.periodMs / layout.slotMs;
    if (!Number.isInteger(this.slots) || this.slots < 1 || this.slots > limits.customProperties - 2) {
      throw new RangeError(`a period must hold 1..${limits.customProperties - 2} whole slots, not ${this.slots}`);
    }
    this.retry = options.retry ?? defaultRetryPolicy;
  }

  private slotName(index: number): string {
    return `v${String(index).padStart(3, '0')}`;
  }

  /** PartitionKey = series, RowKey = start of the period as ticks. */
  private keys(series: string, at: Date) {
    const start = Math.floor(at.getTime() / this.layout.periodMs) * this.layout.periodMs;
    return {
      partitionKey: codecs.text().encode(series),
      rowKey: joinComponents([codecs.ticks().encode(new Date(start))]),
      slot: Math.floor((at.getTime() - start) / this.layout.slotMs),
      start,
    };
  }

  /** Sets the value of the slot holding `at` (a merge of one property: idempotent, safe to retry). */
  async record(series: string, at: Date, value: number): Promise<void> {
    await this.recordMany(series, [{ at, value }]);
  }

  /** Sets several slots; samples of one period are merged into its row with one request. */
  async recordMany(series: string, samples: readonly { at: Date; value: number }[]): Promise<void> {
    const rows = new Map<string, Record<string, unknown> & { partitionKey: string; rowKey: string }>();
    for (const { at, value } of samples) {
      if (!Number.isFinite(value)) throw new RangeError(`sample value ${value} is not finite`);
      const k = this.keys(series, at);
      const row = rows.get(k.rowKey) ?? {
        partitionKey: k.partitionKey,
        rowKey: k.rowKey,
        periodStart: { value: new Date(k.start).toISOString(), type: 'DateTime' },
      };
      row[this.slotName(k.slot)] = { value, type: 'Double' };
      rows.set(k.rowKey, row);
    }
    for (const row of rows.values()) {
      const { partitionKey, rowKey, ...properties } = row;
      validateEntity(partitionKey, rowKey, properties as never);
      await withRetry(() => this.client.upsertEntity(row, 'Merge'), this.retry);
    }
  }

  /** The period holding `at`: one value per slot, undefined where nothing was recorded. */
  async period(series: string, at: Date): Promise<(number | undefined)[]> {
    const k = this.keys(series, at);
    const raw = await readRaw(this.client, k.partitionKey, k.rowKey, this.retry);
    return Array.from({ length: this.slots }, (_, index) => {
      const text = raw && wireString(raw[this.slotName(index)]);
      return text === undefined ? undefined : Number(text);
    });
  }
}
