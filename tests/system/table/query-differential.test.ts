// Differential test (SQL Logic Test's idea): ~300 random filters over ~800 random typed entities.
// The server's answer, all pages followed, must equal the naive evaluation of the same filter in
// tests/helpers/query.ts (Azure REST: querying-tables-and-entities, written without src/table/query). Keys include
// ordinal
// edge
// cases ('10' < '2', 'B' < 'a', surrogate pairs below U+FFFD) and quotes. Reproduce a failure
// with QUERY_SEED=<the printed seed>.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, storeSetups, type RunningServer } from '../../helpers/server.js';
import { inParallel, tableClient, uniqueTableName } from '../../helpers/sdk.js';
import {
  compareKeys,
  comparisonCount,
  edm,
  evaluateFilter,
  fetchAllPages,
  insertEntities,
  keyOf,
  keyText,
  operators,
  renderFilter,
  type FilterExpr,
  type Operator,
  type TestEntity,
  type TestValue,
} from '../../helpers/query.js';
import { runSeed, seededRandom, type Random } from '../../query/random.js';

const entityCount = 800;
const filterCount = 300;
const comparisonsMax = 15; // Azure REST: querying-tables-and-entities
const failuresShown = 5;

const partitionPool = [
  '',
  '1',
  '10',
  '2',
  '9',
  'a',
  'B',
  'b',
  "o'k",
  ' sp',
  '\u00e9',
  '\u{1F600}',
  '\uFFFD',
  'p~',
  'A10',
];
const rowKeyPieces = ['0', '1', '2', '9', '10', 'a', 'B', 'z', '\u00e9', '\u{1F600}', '\uFFFD', "'", ' ', '~'];
const stringPool = ['', '2', '10', 'a', 'A', 'B', 'ab', "it's", '\u00e9', '\u{1F600}', '\uFFFD', ' ', 'zz'];
const guidPool = [
  '0f8fad5b-d9cb-469f-a165-70867728950e',
  '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  'ffffffff-0000-4000-8000-000000000001',
];
const binaryPool = ['00', '01', '0102', '01ff', '02', 'ff', 'ff00ff'];
const baseTicks = 15_627_852_000_000_000n; // 2019-07-10T19:00:00Z
// 1601-01-01T00:00:00Z (Azure REST: payload-format-for-table-service-operations)
const dateTimeTicksMin = -116_444_736_000_000_000n;
const dateTimeTicksMax = 2_534_023_007_999_999_999n; // 9999-12-31T23:59:59.9999999Z
const int64Edges = [0n, 2n, -2n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 31n];
const doubleEdges = [0, -0, 2, 2.5, -1.5, 1e21, 5e-324, 9007199254740992, Number.MAX_VALUE, NaN, Infinity, -Infinity];

/** A value generator per property name; property types are deliberately mixed. */
const generators: Record<string, (r: Random) => TestValue> = {
  n: (r) =>
    r.pick([
      () => edm.int32(r.int(11) - 5),
      () => edm.int32(r.pick([2147483647, -2147483648])),
      () => edm.int64(r.pick(int64Edges)),
      () => edm.double(r.pick(doubleEdges)),
      () => edm.double((r.int(11) - 5) / 2),
      () => edm.string(r.pick(['2', '10', 'a'])),
    ])(),
  s: (r) => edm.string(r.pick(stringPool)),
  d: (r) => {
    const ticks =
      r.pick([baseTicks, dateTimeTicksMin, dateTimeTicksMax]) +
      BigInt(r.int(7) - 3) * r.pick([1n, 10_000n, 10_000_000n]);
    return edm.ticks(ticks < dateTimeTicksMin ? dateTimeTicksMin : ticks > dateTimeTicksMax ? dateTimeTicksMax : ticks);
  },
  g: (r) => (r.chance(0.15) ? edm.string(r.pick(guidPool)) : edm.guid(r.pick(guidPool))),
  b: (r) => edm.binary(r.pick(binaryPool)),
  f: (r) => (r.chance(0.15) ? edm.string('true') : edm.boolean(r.chance(0.5))),
  x: (r) => edm.double(r.chance(0.5) ? r.pick(doubleEdges) : r.int(2001) / 8 - 125),
  i: (r) => edm.int64(r.chance(0.5) ? r.pick(int64Edges) : BigInt(r.int(21) - 10)),
};
const propertyNames = Object.keys(generators);

function randomRowKey(r: Random): string {
  return Array.from({ length: r.int(4) }, () => r.pick(rowKeyPieces)).join('');
}

function randomEntities(r: Random): TestEntity[] {
  const seen = new Set<string>();
  const entities: TestEntity[] = [];
  while (entities.length < entityCount) {
    // Skewed: early partitions are large, late ones small.
    const partitionKey = partitionPool[r.int(r.int(partitionPool.length) + 1)]!;
    const rowKey = randomRowKey(r);
    if (seen.has(keyText([partitionKey, rowKey]))) continue;
    seen.add(keyText([partitionKey, rowKey]));
    const properties: Record<string, TestValue> = {};
    for (const name of propertyNames) if (r.chance(0.75)) properties[name] = generators[name]!(r);
    entities.push({ partitionKey, rowKey, properties });
  }
  return entities.sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
}

/** NaN and infinities have no literal form (Azure REST: querying-tables-and-entities). */
function finiteLiteral(value: TestValue): TestValue {
  return value.type === 'Edm.Double' && !Number.isFinite(value.value) ? edm.double(Number.MAX_VALUE) : value;
}

class FilterGenerator {
  constructor(
    private readonly r: Random,
    private readonly entities: readonly TestEntity[],
  ) {}

  filter(): FilterExpr {
    const budget = this.r.pick([1, 1, 2, 2, 3, 3, 4, 5, 6, 8, 11, comparisonsMax]);
    if (budget > 1 && this.r.chance(0.45)) {
      const keys = this.keyConstraint();
      const rest = budget - comparisonCount(keys);
      return rest < 1 ? keys : { kind: 'and', left: keys, right: this.tree(rest, 0) };
    }
    return this.tree(budget, 0);
  }

  /** The shapes the planner turns into key ranges (docs/architecture.md#queries). */
  private keyConstraint(): FilterExpr {
    const pk = () => this.keyLiteral(true);
    const rk = () => this.keyLiteral(false);
    const cmp = (property: string, op: Operator, value: string): FilterExpr => ({
      kind: 'cmp',
      property,
      op,
      literal: edm.string(value),
    });
    const and = (left: FilterExpr, right: FilterExpr): FilterExpr => ({ kind: 'and', left, right });
    const or = (left: FilterExpr, right: FilterExpr): FilterExpr => ({ kind: 'or', left, right });
    switch (this.r.int(6)) {
      case 0:
        return cmp('PartitionKey', 'eq', pk());
      case 1:
        return and(cmp('PartitionKey', 'eq', pk()), and(cmp('RowKey', 'ge', rk()), cmp('RowKey', 'lt', rk())));
      case 2:
        return and(
          cmp('PartitionKey', this.r.pick(['gt', 'ge']), pk()),
          cmp('PartitionKey', this.r.pick(['lt', 'le']), pk()),
        );
      case 3:
        return or(cmp('PartitionKey', 'eq', pk()), cmp('PartitionKey', 'eq', pk()));
      case 4:
        return or(
          and(cmp('PartitionKey', 'eq', pk()), cmp('RowKey', 'gt', rk())),
          and(cmp('PartitionKey', 'eq', pk()), cmp('RowKey', 'le', rk())),
        );
      default:
        return and(cmp('PartitionKey', 'eq', pk()), cmp('RowKey', 'eq', rk()));
    }
  }

  private tree(budget: number, depth: number): FilterExpr {
    if (budget === 1 || depth >= 6 || this.r.chance(0.25)) {
      const leaf = this.comparison();
      return this.r.chance(0.15) ? { kind: 'not', operand: leaf } : leaf;
    }
    if (this.r.chance(0.15)) return { kind: 'not', operand: this.tree(budget, depth + 1) };
    const left = 1 + this.r.int(budget - 1);
    const kind = this.r.chance(0.5) ? 'and' : 'or';
    return { kind, left: this.tree(left, depth + 1), right: this.tree(budget - left, depth + 1) };
  }

  private comparison(): FilterExpr {
    const op = this.r.pick(operators);
    if (this.r.chance(0.02)) return { kind: 'const', value: this.r.chance(0.5) };
    const roll = this.r.int(100);
    if (roll < 25)
      return { kind: 'cmp', property: this.r.chance(0.6) ? 'PartitionKey' : 'RowKey', op, literal: this.keyValue() };
    if (roll < 28) return { kind: 'cmp', property: 'zz', op, literal: edm.int32(1) }; // no entity has it
    const property = this.r.pick(propertyNames);
    return { kind: 'cmp', property, op, literal: this.literalFor(property) };
  }

  /** Mostly a stored value of the same property (so comparisons hit), sometimes another type. */
  private literalFor(property: string): TestValue {
    const roll = this.r.int(100);
    if (roll < 55) {
      const stored = this.r.pick(this.entities).properties[property];
      if (stored !== undefined) return finiteLiteral(stored);
    }
    const from = roll < 80 ? property : this.r.pick(propertyNames);
    return finiteLiteral(generators[from]!(this.r));
  }

  private keyValue(): TestValue {
    if (this.r.chance(0.05)) return edm.int32(this.r.int(20)); // a key never equals a number
    return edm.string(this.keyLiteral(this.r.chance(0.6)));
  }

  private keyLiteral(partition: boolean): string {
    if (this.r.chance(0.3)) return partition ? this.r.pick(partitionPool) : randomRowKey(this.r);
    const entity = this.r.pick(this.entities);
    return partition ? entity.partitionKey : entity.rowKey;
  }
}

for (const setup of storeSetups) {
  describe(`random filters: server answer = naive evaluation (${setup.label})`, () => {
    const seed = runSeed();
    const random = seededRandom(seed);
    const entities = randomEntities(random);
    let server: RunningServer;
    let table: string;

    before(async () => {
      server = await startServer({ ...setup.options, args: ['--log-level', 'warn'] });
      const client = tableClient(server, uniqueTableName('diff'));
      table = client.tableName;
      await client.createTable();
      await insertEntities(client, entities);
    });
    after(async () => {
      await server?.stop();
    });

    test(`${filterCount} filters over ${entityCount} entities (seed ${seed}; rerun with QUERY_SEED=${seed})`, async (t) => {
      t.diagnostic(`seed ${seed}`);
      const generator = new FilterGenerator(random, entities);
      const jobs = Array.from({ length: filterCount }, () => {
        const filter = generator.filter();
        assert.ok(comparisonCount(filter) <= comparisonsMax);
        return {
          filter,
          text: renderFilter(filter, random),
          top: random.pick([undefined, undefined, undefined, undefined, 250, 50, 11]),
        };
      });
      const failures: string[] = [];
      let nonTrivial = 0;
      await inParallel(jobs, 4, async ({ filter, text, top }) => {
        const expected = entities.filter((e) => evaluateFilter(filter, e)).map((e) => keyText(keyOf(e)));
        if (expected.length > 0 && expected.length < entities.length) nonTrivial++;
        let got: string[];
        try {
          const pages = await fetchAllPages(server.port, table, { $filter: text, $top: top });
          got = pages.flatMap((p) => p.keys).map(keyText);
        } catch (error) {
          failures.push(`$filter=${text} $top=${top}: ${(error as Error).message.slice(0, 400)}`);
          return;
        }
        if (got.join('\n') === expected.join('\n')) return;
        const gotSet = new Set(got);
        const expectedSet = new Set(expected);
        const missing = expected.filter((k) => !gotSet.has(k)).slice(0, 5);
        const extra = got.filter((k) => !expectedSet.has(k)).slice(0, 5);
        const orderOnly = missing.length + extra.length === 0 ? '; order or duplicates differ' : '';
        failures.push(
          `$filter=${text} $top=${top}: expected ${expected.length}, got ${got.length}; ` +
            `missing ${missing.join(' ')}; extra ${extra.join(' ')}${orderOnly}`,
        );
      });
      const summary = `seed ${seed}: ${failures.length} of ${filterCount} filters differ (QUERY_SEED=${seed})`;
      assert.deepEqual(failures.slice(0, failuresShown), [], summary);
      // Canary: the generator must produce filters that separate entities, or agreement proves nothing.
      assert.ok(
        nonTrivial >= filterCount / 4,
        `only ${nonTrivial} filters matched some but not all entities (seed ${seed})`,
      );
    });
  });
}
