// Intra-partition secondary index: employees of a department by id, by e-mail and by last name,
// all in the department's partition (the design guide's first scenario).
import { IndexedTable, LimitError, where } from '../src/index.js';
import { check, freshTable, run } from './common.js';
import { Employee } from './models.js';

type Employees = IndexedTable<typeof Employee.schema, 'email' | 'lastName'>;

async function checkUniqueEmail(employees: Employees): Promise<void> {
  let duplicate = false;
  try {
    await employees.update({ department: 'Sales', employeeId: 1 }, (e) => ({ ...e, email: 'ana@contoso.com' }));
  } catch (error) {
    duplicate = (error as { statusCode?: number }).statusCode === 409;
  }
  check(duplicate, 'a unique index refuses a second employee with the same e-mail (409, nothing changed)');
  check(
    (await employees.get({ department: 'Sales', employeeId: 1 }))!.email === 'don@contoso.com',
    "Don's e-mail is unchanged",
  );
}

async function checkTooLongRefused(employees: Employees): Promise<void> {
  let refused = false;
  try {
    await employees.create({
      department: 'Sales',
      employeeId: 3,
      firstName: 'X',
      lastName: 'Y',
      email: 'x'.repeat(40_000),
      salary: 1n,
      hired: new Date(),
    });
  } catch (error) {
    refused = error instanceof LimitError && error.code === 'PropertyValueTooLarge';
  }
  check(refused, 'an e-mail of 40,000 characters is refused before sending (PropertyValueTooLarge)');
}

await run('Intra-partition secondary index: employees by department, e-mail and last name', async () => {
  const client = await freshTable('Employees');
  const employees = new IndexedTable(client, Employee, {
    email: { key: ['email'], unique: true },
    lastName: { key: ['lastName', 'firstName'] },
  });
  const people = [
    { employeeId: 1, firstName: 'Don', lastName: 'Hall', email: 'don@contoso.com' },
    { employeeId: 2, firstName: 'Jun', lastName: 'Cao', email: 'jun@contoso.com' },
    { employeeId: 10, firstName: 'Ana', lastName: 'Hall', email: 'ana@contoso.com' },
  ];
  for (const p of people) {
    await employees.create({
      department: 'Sales',
      ...p,
      salary: 50_000n + BigInt(p.employeeId),
      hired: new Date('2020-01-02T03:04:05Z'),
    });
  }
  console.log(`created ${people.length} employees in Sales, each with 2 index rows, 1 transaction each`);

  const byEmail = await employees.findBy('email', { department: 'Sales', email: 'jun@contoso.com' });
  check(byEmail.length === 1 && byEmail[0]!.employeeId === 2, 'lookup by e-mail finds Jun (one range query)');
  const halls = await employees.findBy('lastName', { department: 'Sales', lastName: 'Hall' });
  check(
    halls.map((e) => e.firstName).join(',') === 'Ana,Don',
    'lookup by last name finds both Halls, sorted by first name',
  );

  await employees.update({ department: 'Sales', employeeId: 2 }, (e) => ({ ...e, email: 'jun.cao@contoso.com' }));
  check(
    (await employees.findBy('email', { department: 'Sales', email: 'jun@contoso.com' })).length === 0,
    'the old e-mail no longer finds anyone',
  );
  check(
    (await employees.findBy('email', { department: 'Sales', email: 'jun.cao@contoso.com' })).length === 1,
    'the new e-mail finds Jun',
  );

  await checkUniqueEmail(employees);

  const all = await employees.listPartition({ department: 'Sales' });
  check(
    all.map((e) => e.employeeId).join(',') === '1,2,10',
    'employee ids sort numerically (zero-padded RowKey: 1, 2, 10)',
  );
  check(all[0]!.salary === 50_001n && typeof all[0]!.salary === 'bigint', 'Int64 salary reads back as a bigint');

  await checkTooLongRefused(employees);

  const rich = where(Employee.schema).compare('salary', 'gt', 50_001n);
  console.log(`typed filter: ${rich.text}`);
  await employees.delete({ department: 'Sales', employeeId: 10 });
  check(
    (await employees.findBy('lastName', { department: 'Sales', lastName: 'Hall' })).length === 1,
    'after deleting Ana, one Hall is left in the index',
  );
  check((await employees.verifyPartition({ department: 'Sales' })).length === 0, 'every index row matches its entity');
});
