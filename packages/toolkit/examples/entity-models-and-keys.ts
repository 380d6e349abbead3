// Entity models and key templates: typed schema with explicit EDM types, keys that sort as their
// values (padded, inverted, signed, escaped), a kind marker for mixed partitions, and the service
// limits checked before anything is sent.
import { codecs, defineModel, LimitError, ModelTable, t, type KeyCodec } from '../src/index.js';
import { check, freshTable, run } from './common.js';

const Order = defineModel({
  kind: 'order',
  schema: {
    customer: t.string(),
    orderNumber: t.int64(),
    placed: t.dateTime(),
    total: t.double(),
    priority: t.int32(),
    express: t.boolean(),
    reference: t.guid(),
    attachment: t.binary().optional(),
  },
  partitionKey: ['customer'],
  rowKey: [{ literal: 'order' }, { field: 'placed', codec: codecs.invertedTicks() }, 'orderNumber'],
});

await run('Entity models, key templates and limits', async () => {
  const orders = new ModelTable(await freshTable('Orders'), Order);
  const customer = 'ACME/EU #1?'; // holds characters a key may not hold
  for (let i = 1; i <= 3; i++) {
    await orders.upsert({
      customer,
      orderNumber: 9_007_199_254_740_993n + BigInt(i), // beyond 2^53: exact as a bigint
      placed: new Date(Date.UTC(2026, 0, i)),
      total: i * 10.25,
      priority: -i,
      express: i % 2 === 0,
      reference: `00000000-0000-0000-0000-00000000000${i}`,
      ...(i === 1 ? { attachment: new Uint8Array([1, 2, 3]) } : {}),
    });
  }
  const keys = Order.keysOf({ customer, placed: new Date(Date.UTC(2026, 0, 1)), orderNumber: 1n });
  console.log(`PartitionKey ${JSON.stringify(keys.partitionKey)}, RowKey ${JSON.stringify(keys.rowKey)}`);
  check(
    !/[\/\\#?]/.test(keys.partitionKey) && Order.partitionKey.decode(keys.partitionKey).customer === customer,
    'the customer name is escaped in the key and decodes back',
  );
  const all = await orders.list({ filter: `PartitionKey eq '${keys.partitionKey.replaceAll("'", "''")}'` });
  check(all.map((o) => o.placed.getUTCDate()).join(',') === '3,2,1', 'inverted ticks list the newest order first');
  check(all[2]!.orderNumber === 9_007_199_254_740_994n, 'Int64 order numbers beyond 2^53 are exact bigints');
  check(
    all[2]!.attachment?.length === 3 && all[0]!.attachment === undefined,
    'an optional Binary property is stored only when set',
  );
  check(
    all.every((o) => typeof o.express === 'boolean' && o.reference.startsWith('00000000')),
    'Boolean and Guid round-trip with their types',
  );

  const ordered = (codec: KeyCodec<any>, values: unknown[]) =>
    values.map((v) => codec.encode(v)).every((k, i, a) => i === 0 || a[i - 1]! < k);
  check(ordered(codecs.int(6), [-999_999, -10, -9, 0, 9, 10]), 'signed int keys: -10 < -9 < 0 < 9 < 10 as strings');
  check(ordered(codecs.uint(4), [2, 9, 10, 100]), 'zero-padded: 9 sorts before 10');
  check(ordered(codecs.invertedUint(4), [100, 10, 9, 2]), 'inverted numbers: largest first');
  check(ordered(codecs.text(), ['a', 'a b', 'a/b', 'a?', 'ab', 'b']), 'escaped text keeps string order');

  const refusals: [string, () => unknown, string][] = [
    ['a 2 KiB key', () => Order.toEntity({ ...all[0]!, customer: 'x'.repeat(2000) }), 'KeyValueTooLarge'],
    [
      'a date before 1601',
      () => Order.toEntity({ ...all[0]!, placed: new Date(Date.UTC(1500, 0, 1)) }),
      'OutOfRangeInput',
    ],
    [
      'a 70 KiB binary',
      () => Order.toEntity({ ...all[0]!, attachment: new Uint8Array(70_000) }),
      'PropertyValueTooLarge',
    ],
  ];
  for (const [what, attempt, code] of refusals) {
    let got = '';
    try {
      attempt();
    } catch (error) {
      got = error instanceof LimitError ? error.code : String(error);
    }
    check(got === code, `${what} is refused before sending (${code})`);
  }
  let badName = '';
  try {
    defineModel({ kind: 'x', schema: { 'bad-name': t.string() }, partitionKey: ['bad-name'], rowKey: [] });
  } catch (error) {
    badName = error instanceof LimitError ? error.code : String(error);
  }
  check(badName === 'PropertyNameInvalid', 'a property name with a dash is refused when the model is defined');
});
