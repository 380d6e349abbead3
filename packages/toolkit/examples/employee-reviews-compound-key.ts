// Compound key: RowKey = employee id + "review" + year, so one point read fetches a given year's
// review and one range query all reviews of an employee, in year order.
import { codecs, defineModel, keys, ModelTable, t } from '../src/index.js';
import { check, freshTable, run } from './common.js';

const Review = defineModel({
  kind: 'review',
  schema: { department: t.string(), employeeId: t.int32(), year: t.int32(), rating: t.double(), notes: t.string() },
  partitionKey: ['department'],
  rowKey: [
    { field: 'employeeId', codec: codecs.uint(8) },
    { literal: 'review' },
    { field: 'year', codec: codecs.uint(4) },
  ],
});

await run('Compound key: employee reviews by year', async () => {
  const reviews = new ModelTable(await freshTable('Reviews'), Review);
  for (const year of [2024, 2022, 2023])
    await reviews.upsert({
      department: 'Sales',
      employeeId: 1,
      year,
      rating: 3.5 + (year - 2022) / 2,
      notes: `review ${year}`,
    });
  await reviews.upsert({ department: 'Sales', employeeId: 10, year: 2023, rating: 4, notes: 'other employee' });
  const one = await reviews.get({ department: 'Sales', employeeId: 1, year: 2023 });
  check(
    one?.notes === 'review 2023',
    'point read of employee 1, 2023 (RowKey ' + Review.rowKey.encode({ employeeId: 1, year: 2023 }) + ')',
  );
  const range = Review.rowKey.range({ employeeId: 1 });
  const all = await reviews.list({ filter: keys.partitionKey('eq', 'Sales').and(keys.rowKeyRange(range)) });
  check(
    all.map((r) => r.year).join(',') === '2022,2023,2024',
    'range query returns employee 1’s reviews in year order, not employee 10’s',
  );
  const ratings = await reviews.list({ filter: keys.partitionKey('eq', 'Sales'), select: ['year', 'rating'] });
  check(
    ratings.length === 4 && ratings.every((r) => r.notes === undefined && typeof r.rating === 'number'),
    '$select returns only year and rating',
  );
});
