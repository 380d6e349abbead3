// Data series: a sensor's hourly readings of one day are 24 properties of one entity, written by
// merges and read with one point read.
import { DataSeries } from '../src/index.js';
import { check, freshTable, run } from './common.js';

await run('Data series: hourly values of a day in one entity', async () => {
  const series = new DataSeries(await freshTable('Readings'));
  const day = Date.UTC(2026, 10, 23);
  await series.recordMany(
    'sensor-7',
    Array.from({ length: 24 }, (_, hour) => ({ at: new Date(day + hour * 3_600_000 + 60_000), value: 20 + hour / 2 })),
  );
  await series.record('sensor-7', new Date(day + 5 * 3_600_000), 99.5);
  await series.record('sensor-7', new Date(day + 5 * 3_600_000), 99.5); // idempotent: same value again
  const values = await series.period('sensor-7', new Date(day + 12 * 3_600_000));
  console.log('values:', values.join(' '));
  check(values.length === 24 && values.every((v) => v !== undefined), 'one read returns all 24 hourly values');
  check(values[5] === 99.5 && values[23] === 31.5, 'a later merge replaced hour 5 and kept the others');
  check(values[0] === 20 && typeof values[0] === 'number', 'a whole-number Double reads back as the number 20');
});
