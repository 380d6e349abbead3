// The store's scan conditions are a prefilter (TableStore.PropertyCondition): on the real SQLite store
// (and the PostgreSQL one when the run has a database),
// a condition never drops a row that satisfies it, at the edges of each type's representation,
// and it does drop rows far from satisfying it (so the store really filters).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EdmValue } from '../../src/domain/edm.js';
import { dateTimeTicksMax, dateTimeTicksMin } from '../../src/domain/edm.js';
import type { KeyRange } from '../../src/domain/keys.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { ComparisonOperator, PropertyCondition, TableStore, TableInfo } from '../../src/storage/table-store.js';
import { openPostgresStore, testDatabaseUrl } from '../helpers/postgres.js';

const operators: readonly ComparisonOperator[] = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'];
const holds: Record<ComparisonOperator, (order: number) => boolean> = {
  eq: (o) => o === 0,
  ne: (o) => o !== 0,
  gt: (o) => o > 0,
  ge: (o) => o >= 0,
  lt: (o) => o < 0,
  le: (o) => o <= 0,
};
const compare = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

const table: TableInfo = { account: 'devstoreaccount1', name: 'conditions' };
const hourTicks = 36_000_000_000n;
/** Literals at, before 1970 and at both ends of the DateTime range; stored values around each. */
const dateTimeLiterals = [
  17_040_672_001_234_567n,
  -1_234_567n,
  0n,
  dateTimeTicksMin + 20_000n,
  dateTimeTicksMax - 20_000n,
];
const offsets = [
  0n,
  1n,
  -1n,
  9_999n,
  -9_999n,
  10_000n,
  -10_000n,
  10_001n,
  -10_001n,
  19_999n,
  -19_999n,
  hourTicks,
  -hourTicks,
];

interface Row {
  readonly rowKey: string;
  readonly value: EdmValue;
}

function dateTimeRows(): Row[] {
  const rows: Row[] = [];
  for (const literal of dateTimeLiterals) {
    for (const offset of offsets) {
      const ticks = literal + offset;
      if (ticks < dateTimeTicksMin || ticks > dateTimeTicksMax) continue;
      rows.push({ rowKey: `d${rows.length}`, value: { type: 'Edm.DateTime', value: ticks } });
    }
  }
  rows.push({ rowKey: 'date-as-string', value: { type: 'Edm.String', value: '2024-01-01T00:00:00Z' } });
  return rows;
}

const booleanRows: Row[] = [
  { rowKey: 'true', value: { type: 'Edm.Boolean', value: true } },
  { rowKey: 'false', value: { type: 'Edm.Boolean', value: false } },
  { rowKey: 'one', value: { type: 'Edm.Int32', value: 1 } },
  { rowKey: 'text', value: { type: 'Edm.String', value: 'true' } },
];

const engines: readonly { readonly label: string; readonly open: () => Promise<TableStore> }[] = [
  { label: 'SQLite', open: () => SqliteStore.open({ location: undefined }) },
  ...(testDatabaseUrl() === undefined ? [] : [{ label: 'PostgreSQL', open: () => openPostgresStore() }]),
];

for (const engine of engines) {
  describe(`scan conditions on the ${engine.label} store`, () => {
    let store: TableStore;
    const rows = [...dateTimeRows(), ...booleanRows];

    before(async () => {
      store = await engine.open();
      await store.createTable(table.account, table.name);
      const writes = rows.map(({ rowKey, value }) => ({
        partitionKey: 'p',
        rowKey,
        condition: { kind: 'none' } as const,
        action: { kind: 'put' as const, properties: new Map([['v', value]]) },
      }));
      assert.ok((await store.commit(table, writes)).ok);
    });
    after(async () => {
      await store?.close();
    });

    async function kept(condition: PropertyCondition): Promise<Set<string>> {
      const keys = new Set<string>();
      let range: KeyRange = {};
      for (;;) {
        const step = await store.scan(table, range, { conditions: [condition], limit: 10_000 });
        for (const entity of step.entities) keys.add(entity.rowKey);
        if (step.next === undefined) return keys;
        range = { lower: step.next };
      }
    }

    for (const literal of dateTimeLiterals) {
      for (const operator of operators) {
        test(`DateTime v ${operator} ${literal} ticks: no satisfying row dropped; far rows dropped`, async () => {
          const result = await kept({ kind: 'dateTime', property: 'v', operator, value: literal });
          for (const { rowKey, value } of rows) {
            if (value.type !== 'Edm.DateTime') continue;
            const order = compare(value.value, literal);
            if (holds[operator](order)) assert.ok(result.has(rowKey), `${rowKey} (${value.value}) dropped`);
            const far = value.value - literal >= hourTicks || literal - value.value >= hourTicks;
            if (far && !holds[operator](order) && operator !== 'ne') assert.ok(!result.has(rowKey), `${rowKey} kept`);
          }
        });
      }
    }

    for (const literal of [true, false]) {
      for (const operator of operators) {
        test(`Boolean v ${operator} ${literal}: exact on stored Booleans`, async () => {
          const result = await kept({ kind: 'boolean', property: 'v', operator, value: literal });
          for (const stored of [true, false]) {
            const order = compare(BigInt(Number(stored)), BigInt(Number(literal)));
            assert.equal(result.has(String(stored)), holds[operator](order), `stored ${stored}`);
          }
        });
      }
    }
  });
}
