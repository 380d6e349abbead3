// Eventually consistent transaction on a real queue, as the design guide tells it: archiving an
// employee puts a message on a queue; a worker gets it, copies the employee into the archive table
// (insert-or-replace), deletes it from the department partition (If-Match on the copied version),
// and only then deletes the message. A worker that dies half-way leaves the message to reappear;
// the steps are safe to repeat. (examples/archive-employee.ts does the same with the table-only outbox.)
import { QueueServiceClient } from '@azure/storage-queue';
import { enqueueWork, moveRowSteps, ModelTable, QueueWorker, readRaw, type RowKeys } from '../src/index.js';
import { check, connectionString, freshTable, run, uniqueName } from './common.js';
import { Employee, employee } from './models.js';

/** The work message: which employee to archive, and under which archive keys. */
interface ArchiveWork {
  from: RowKeys;
  to: RowKeys;
}

if (!/(^|;)QueueEndpoint=/i.test(connectionString())) {
  console.log('# Eventually consistent transaction on a queue: skipped (the connection string names no QueueEndpoint)');
} else {
  await run('Eventually consistent transaction on a queue: archive an employee into another table', async () => {
    const current = await freshTable('Employees');
    const archive = await freshTable('EmployeeArchive');
    const employees = new ModelTable(current, Employee);
    const stored = await employees.create(employee('Sales', 7, 'Ana', 'Hall'));

    const service = QueueServiceClient.fromConnectionString(connectionString());
    const worker = new QueueWorker<ArchiveWork>(service, uniqueName('archive').toLowerCase(), {
      handle: (work) => moveRowSteps(current, work.from, archive, work.to),
      visibilityTimeoutSeconds: 30,
      maxDequeueCount: 5,
    });
    await worker.ensureQueues();
    try {
      const from = { partitionKey: stored.partitionKey, rowKey: stored.rowKey };
      await enqueueWork(worker.queue, { from, to: { partitionKey: '2026', rowKey: `Sales ${stored.rowKey}` } });
      check(
        (await employees.get({ department: 'Sales', employeeId: 7 })) !== undefined,
        'until a worker runs, the employee is still in the department partition (eventual consistency)',
      );
      const pass = await worker.drain();
      check(pass.done === 1, 'the worker completed one message');
      check(
        (await employees.get({ department: 'Sales', employeeId: 7 })) === undefined,
        'the employee left the department partition',
      );
      const archived = await readRaw(archive, '2026', `Sales ${stored.rowKey}`);
      check(
        archived !== undefined && Employee.decodeRow(archived).firstName === 'Ana',
        'the employee is in the archive table',
      );
      check((await worker.queue.peekMessages()).peekedMessageItems.length === 0, 'no message is left on the queue');
    } finally {
      await worker.queue.deleteIfExists();
      await worker.poison.deleteIfExists();
    }
  });
}
