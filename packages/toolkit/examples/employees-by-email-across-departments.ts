// Inter-partition secondary index with the outbox: find an employee by e-mail without knowing the
// department. The entity and an outbox message are written in one transaction in the department's
// partition; the worker applies the message to the index table.
import { OutboxIndexedTable, connect } from '../src/index.js';
import { check, connectionString, freshTable, run } from './common.js';
import { Employee, employee } from './models.js';

await run('Inter-partition secondary index: employees by e-mail across departments (outbox + worker)', async () => {
  const source = await freshTable('Employees');
  const index = await freshTable('EmployeesByEmail');
  const tables = new Map([[index.tableName, index]]);
  const employees = new OutboxIndexedTable(
    source,
    Employee,
    { table: index.tableName, keys: (e) => ({ partitionKey: e.email, rowKey: '' }), copy: ['department', 'lastName'] },
    { tables: (name) => tables.get(name) ?? connect(connectionString(), name) },
  );
  await employees.create(employee('Sales', 1, 'Don', 'Hall'));
  await employees.create(employee('Marketing', 2, 'Jun', 'Cao'));
  check(
    (await employees.lookup('jun.cao@contoso.com')).length === 0,
    'before the worker runs, the index does not know Jun yet (eventual consistency)',
  );
  const applied = await employees.worker.drainAll();
  console.log(`worker applied ${applied} outbox messages`);
  const rows = await employees.lookup('jun.cao@contoso.com');
  check(rows.length === 1, 'after the worker ran, the e-mail finds one index row');
  const jun = rows[0] && (await employees.resolve(rows[0]));
  check(jun?.department === 'Marketing' && jun.employeeId === 2, 'the index row leads to Jun in Marketing');

  await employees.update({ department: 'Marketing', employeeId: 2 }, (e) => ({ ...e, email: 'jun@contoso.com' }));
  await employees.worker.drainPartition('Marketing');
  check(
    (await employees.lookup('jun.cao@contoso.com')).length === 0,
    'the old e-mail is gone from the index after the change was applied',
  );
  check((await employees.lookup('jun@contoso.com')).length === 1, 'the new e-mail is indexed');
  check((await employees.worker.drainAll()) === 0, 'no message is left in the outbox');

  await employees.delete({ department: 'Sales', employeeId: 1 });
  await employees.worker.drainAll();
  check(
    (await employees.lookup('don.hall@contoso.com')).length === 0,
    "Don's index row is gone after his delete was applied",
  );
});
