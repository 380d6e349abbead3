// The TableStore conformance suite (after Hono's router suite, litestream's replica-client
// tests): one function that takes a factory for an engine's TableStore and registers every case of the
// contract in src/storage/table-store.ts against it. An engine that differs somewhere passes a skip list,
// each entry with its written reason; a skip that names no case is an error, so a renamed case
// cannot silently stop running.
//
// Each group of cases gets its own fresh store; each case works in accounts and tables of its own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TableStore, TableInfo } from '../../../src/storage/table-store.js';
import type { StoreFactory, StoreUnderTest } from './support.js';
import { commitCases } from './cases/commit.js';
import { keyOrderCases } from './cases/keys.js';
import { prefilterCases } from './cases/prefilter.js';
import { scanCases } from './cases/scan.js';
import { settingCases } from './cases/settings.js';
import { tableCases } from './cases/tables.js';
import { timestampCases } from './cases/timestamps.js';
import { valueCases } from './cases/values.js';
import { durabilityCases } from './cases/durability.js';
import { propertyIndexCases } from './cases/property-index.js';

/** What a case works with: the group's store, and accounts and tables no other case uses. */
export interface CaseContext {
  readonly store: TableStore;
  /** A fresh account name. */
  account(): string;
  /** Creates a table in a fresh account and returns it as the store names it. */
  table(): Promise<TableInfo>;
  /** Closes the store and opens the same data again (StoreUnderTest.reopen); throws if the engine cannot. */
  reopen(): Promise<TableStore>;
}

export interface ConformanceCase {
  /** Unique across the suite: the key of a skip entry. */
  readonly name: string;
  run(context: CaseContext): Promise<void>;
}

export interface ConformanceGroup {
  readonly name: string;
  readonly cases: readonly ConformanceCase[];
}

const conformanceGroups: readonly ConformanceGroup[] = [
  { name: 'key order', cases: keyOrderCases },
  { name: 'key ranges and scan steps', cases: scanCases },
  { name: 'atomic commits', cases: commitCases },
  { name: 'commit timestamps', cases: timestampCases },
  { name: 'values, merges and limits', cases: valueCases },
  { name: 'scan conditions (prefilter)', cases: prefilterCases },
  { name: 'settings', cases: settingCases },
  { name: 'tables', cases: tableCases },
  { name: 'durability across reopen', cases: durabilityCases },
  { name: 'automatic property indexes', cases: propertyIndexCases },
];

export interface ConformanceOptions {
  /** Case name → the written reason this engine does not run it. */
  readonly skip?: Readonly<Record<string, string>>;
}

/** Registers the whole suite for one engine (node:test describe/test). */
export function runStoreConformance(engine: string, factory: StoreFactory, options: ConformanceOptions = {}): void {
  const skip = new Map(Object.entries(options.skip ?? {}));
  const names = new Set<string>();
  for (const group of conformanceGroups) {
    for (const c of group.cases) {
      assert.ok(!names.has(c.name), `case names are unique: ${c.name}`);
      names.add(c.name);
    }
  }
  for (const [name, reason] of skip) {
    assert.ok(names.has(name), `${engine}: the skip list names no case "${name}"`);
    assert.ok(reason.trim().length > 0, `${engine}: the skip of "${name}" needs a written reason`);
  }

  describe(`TableStore conformance: ${engine}`, () => {
    for (const group of conformanceGroups) {
      describe(group.name, () => {
        let subject: StoreUnderTest | undefined;
        let store: TableStore | undefined;
        before(async () => {
          subject = await factory();
          store = subject.store;
        });
        after(async () => {
          await subject?.close();
        });
        const context: CaseContext = {
          get store(): TableStore {
            assert.ok(store !== undefined, 'the group store is open');
            return store;
          },
          account: freshAccount,
          table: async () => {
            const table = { account: freshAccount(), name: freshTableName() };
            assert.equal(await context.store.createTable(table.account, table.name), 'created');
            return table;
          },
          reopen: async () => {
            assert.ok(subject?.reopen !== undefined, `${engine} cannot reopen its data: skip this case with a reason`);
            store = await subject.reopen();
            return store;
          },
        };
        for (const c of group.cases) {
          const reason = skip.get(c.name);
          if (reason !== undefined) test(c.name, { skip: `${engine}: ${reason}` }, () => undefined);
          else test(c.name, () => c.run(context));
        }
      });
    }
  });
}

let accounts = 0;
let tables = 0;

function freshAccount(): string {
  return `acct${++accounts}`;
}

function freshTableName(): string {
  return `table${++tables}`;
}
