// Eventually consistent transaction across tables: archiving an employee deletes the row in the
// department partition and records, in the same transaction, a message that inserts it into the
// archive table. The worker applies it; running the worker twice changes nothing.
import { OutboxWorker, connect, readRaw, transact } from '../src/index.js';
import { ModelTable } from '../src/index.js';
import { check, connectionString, freshTable, run } from './common.js';
import { Employee, employee } from './models.js';

await run('Eventually consistent transaction: archive an employee into another table', async () => {
  const current = await freshTable('Employees');
  const archive = await freshTable('EmployeeArchive');
  const employees = new ModelTable(current, Employee);
  await employees.create(employee('Sales', 7, 'Ana', 'Hall'));

  const stored = (await employees.get({ department: 'Sales', employeeId: 7 }))!;
  const { partitionKey, rowKey, etag: _etag, timestamp: _timestamp, ...values } = stored;
  const row = Employee.toEntity(values);
  const { partitionKey: _p, rowKey: _r, ...properties } = row;
  await transact(
    current,
    partitionKey,
    [['delete', { partitionKey, rowKey }]],
    [
      {
        table: archive.tableName,
        partitionKey: '2026',
        rowKey: `${partitionKey} ${rowKey}`,
        action: 'upsert',
        properties: properties as never,
      },
    ],
  );
  check(
    (await employees.get({ department: 'Sales', employeeId: 7 })) === undefined,
    'the employee left the department partition at once',
  );
  const worker = new OutboxWorker(current, {
    tables: (name) => (name === archive.tableName ? archive : connect(connectionString(), name)),
  });
  check((await worker.drainAll()) === 1, 'the worker applied one message');
  const archived = await readRaw(archive, '2026', `${partitionKey} ${rowKey}`);
  check(
    archived !== undefined && Employee.decodeRow(archived).firstName === 'Ana',
    'the employee is in the archive table',
  );
  check((await worker.drainAll()) === 0, 'running the worker again finds nothing to do');
});
