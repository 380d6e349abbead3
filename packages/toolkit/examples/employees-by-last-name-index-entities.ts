// Index entities: one row per last name lists the employees who have it; it is written in the
// same transaction as the employee, so the list never misses or keeps anyone.
import { IndexEntityTable } from '../src/index.js';
import { check, freshTable, run } from './common.js';
import { Employee, employee } from './models.js';

await run('Index entities: employees by last name', async () => {
  const client = await freshTable('Employees');
  const byLastName = new IndexEntityTable(client, Employee, 'lastName');
  for (const [id, first, last] of [
    [1, 'Don', 'Jones'],
    [2, 'Ana', 'Jones'],
    [3, 'Jun', 'Cao'],
  ] as const) {
    await byLastName.write({ department: 'Sales', employeeId: id }, () => employee('Sales', id, first, last));
  }
  const joneses = await byLastName.find({ department: 'Sales' }, 'Jones');
  check(
    joneses
      .map((e) => e.firstName)
      .sort()
      .join(',') === 'Ana,Don',
    'the Jones index entity lists Don and Ana (one read + two point reads)',
  );
  await byLastName.write({ department: 'Sales', employeeId: 2 }, (e) => ({ ...e!, lastName: 'Cao' }));
  check(
    (await byLastName.find({ department: 'Sales' }, 'Jones')).length === 1,
    'after Ana became a Cao, Jones lists one employee',
  );
  check((await byLastName.find({ department: 'Sales' }, 'Cao')).length === 2, 'and Cao lists two');
  await byLastName.write({ department: 'Sales', employeeId: 1 }, () => null);
  check(
    (await byLastName.find({ department: 'Sales' }, 'Jones')).length === 0,
    'deleting Don empties (and removes) the Jones index entity',
  );
});
