// High-volume delete: one table per day; expiring a day is one Delete Table, whatever it holds.
// Reads over a date range go across the day tables in order.
import { PeriodTables } from '../src/index.js';
import { check, connectionString, run, uniqueName } from './common.js';

await run('High-volume delete: a table per day, rotation and reads across days', async () => {
  const logs = new PeriodTables(connectionString(), uniqueName('logins'), 'day');
  const day = (n: number) => new Date(Date.UTC(2026, 10, 20 + n, 9));
  try {
    for (let n = 0; n < 4; n++) {
      const table = await logs.tableFor(day(n));
      for (let i = 0; i < 25; i++)
        await table.upsertEntity({ partitionKey: `user${i % 5}`, rowKey: `${n}-${i}`, day: n });
    }
    check((await logs.tables()).length === 4, `4 day tables: ${(await logs.tables()).join(', ')}`);
    let across = 0;
    for await (const _row of logs.readAcross(day(1), day(2))) across++;
    check(across === 50, 'reading 21–22 November crosses two tables: 50 rows');
    const dropped = await logs.rotate(day(2));
    console.log(`rotation dropped ${dropped.join(', ')}`);
    check(
      dropped.length === 2 && (await logs.tables()).length === 2,
      'keeping from 22 November drops the two older tables (2 requests for 50 rows)',
    );
  } finally {
    await logs.rotate(day(10));
  }
});
