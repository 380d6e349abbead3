// High-volume delete (design guide): instead of deleting millions of old rows one by one, keep
// one table per period (e.g. per day) and drop whole tables once their period has expired: one
// request per period, whatever it holds. Queries over a time range read across the tables.
import { TableClient, TableServiceClient, type TableServiceClientOptions } from '@azure/data-tables';
import { defaultRetryPolicy, statusOf, withRetry, type RetryPolicy } from '../retry.js';
import { ensureTable, rawPages, type QueryOptions } from '../table.js';
import type { RawEntity } from '../model.js';

export type Period = 'day' | 'month';

export class PeriodTables {
  private readonly service: TableServiceClient;
  private readonly retry: RetryPolicy;
  private readonly created = new Set<string>();

  constructor(
    private readonly connectionString: string,
    /** Letters only, 1..50 characters: table names are the prefix plus the period's digits. */
    readonly prefix: string,
    readonly period: Period = 'day',
    private readonly options: { retry?: RetryPolicy; client?: TableServiceClientOptions } = {},
  ) {
    if (!/^[A-Za-z][A-Za-z0-9]{0,49}$/.test(prefix))
      throw new RangeError(
        `table prefix ${JSON.stringify(prefix)} must be 1..50 letters and digits, starting with a letter`,
      );
    this.retry = options.retry ?? defaultRetryPolicy;
    this.service = TableServiceClient.fromConnectionString(connectionString, this.clientOptions());
  }

  private clientOptions(): TableServiceClientOptions {
    return {
      allowInsecureConnection: true,
      ...this.options.client,
      retryOptions: { maxRetries: 0, ...this.options.client?.retryOptions },
    };
  }

  /** Start of the period holding `at` (UTC). */
  periodStart(at: Date): Date {
    return this.period === 'day'
      ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
      : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  }

  private nextPeriod(start: Date): Date {
    return this.period === 'day'
      ? new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + 1))
      : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  }

  /** `<prefix><YYYYMMDD>` or `<prefix><YYYYMM>`: names sort as their periods do. */
  tableName(at: Date): string {
    const digits = this.periodStart(at).toISOString().slice(0, 10).replaceAll('-', '');
    return this.prefix + (this.period === 'day' ? digits : digits.slice(0, 6));
  }

  /** The client of the table for `at`'s period, created on first use. */
  async tableFor(at: Date): Promise<TableClient> {
    const name = this.tableName(at);
    const client = TableClient.fromConnectionString(this.connectionString, name, this.clientOptions());
    if (!this.created.has(name)) {
      await ensureTable(client, this.retry);
      this.created.add(name);
    }
    return client;
  }

  /** Existing period tables, oldest first. */
  async tables(): Promise<string[]> {
    const pattern = new RegExp(`^${this.prefix}[0-9]{${this.period === 'day' ? 8 : 6}}$`);
    const names: string[] = [];
    const filter = `TableName ge '${this.prefix}' and TableName lt '${this.prefix}{'`;
    for await (const table of this.service.listTables({ queryOptions: { filter } })) {
      if (table.name && pattern.test(table.name)) names.push(table.name);
    }
    return names.sort();
  }

  /**
   * Drops every period table whose whole period ended before `keepFrom`'s period: one delete per
   * table, however many rows it holds. Returns the names dropped.
   */
  async rotate(keepFrom: Date): Promise<string[]> {
    const oldestKept = this.tableName(keepFrom);
    const dropped: string[] = [];
    for (const name of await this.tables()) {
      if (name >= oldestKept) continue;
      await withRetry(async () => {
        try {
          await this.service.deleteTable(name);
        } catch (error) {
          if (statusOf(error) !== 404) throw error;
        }
      }, this.retry);
      this.created.delete(name);
      dropped.push(name);
    }
    return dropped;
  }

  /** Rows of every period from `from` to `to` (inclusive), oldest period first; missing tables are skipped. */
  async *readAcross(from: Date, to: Date, options: QueryOptions = {}): AsyncGenerator<RawEntity> {
    const existing = new Set(await this.tables());
    for (let start = this.periodStart(from); start <= to; start = this.nextPeriod(start)) {
      const name = this.tableName(start);
      if (!existing.has(name)) continue;
      const client = TableClient.fromConnectionString(this.connectionString, name, this.clientOptions());
      for await (const page of rawPages(client, options, this.retry)) yield* page.items;
    }
  }
}
