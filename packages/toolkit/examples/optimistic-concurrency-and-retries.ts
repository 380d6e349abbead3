// Concurrency and resilience: 20 concurrent raises of one salary through optimistic updates
// (If-Match, re-read and retry on 412) lose none, even while a third of the requests fail with an
// injected 503, half of them after the service applied the write (the response is "lost").
import { connect, ensureTable, ModelTable } from '../src/index.js';
import { faultInjectionPolicy, seededRandom } from '../src/testing.js';
import { check, connectionString, run, uniqueName } from './common.js';
import { Employee, employee } from './models.js';

await run('Optimistic concurrency with bounded retries, and retries of 503 with backoff and jitter', async () => {
  const name = uniqueName('Payroll');
  const faults = faultInjectionPolicy({ probability: 0.3, random: seededRandom(14) });
  faults.enabled.value = false;
  const client = connect(connectionString(), name, {
    additionalPolicies: [{ policy: faults.policy, position: 'perRetry' }],
  });
  await ensureTable(client);
  try {
    const payroll = new ModelTable(client, Employee, {
      retry: { maxAttempts: 12, baseDelayMs: 5, maxDelayMs: 100, random: seededRandom(7) },
      maxConflictRetries: 64,
    });
    await payroll.create(employee('Sales', 1, 'Don', 'Hall'));
    const before = (await payroll.get({ department: 'Sales', employeeId: 1 }))!.salary;
    faults.enabled.value = true;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        payroll.update({ department: 'Sales', employeeId: 1 }, (e) => ({ ...e, salary: e.salary + 100n })),
      ),
    );
    faults.enabled.value = false;
    const after = (await payroll.get({ department: 'Sales', employeeId: 1 }))!.salary;
    console.log(
      `salary ${before} -> ${after}; injected ${faults.counters.before} failures before sending, ${faults.counters.after} after the service answered`,
    );
    check(faults.counters.before + faults.counters.after > 0, 'failures were injected');
    check(after === before + 2_000n, 'all 20 raises applied exactly once (no lost update, no double apply)');
  } finally {
    await client.deleteTable();
  }
});
