// Denormalization: the department row carries a copy of its manager's name and e-mail, so one
// point read answers "who manages Sales?". The copy is kept true by changing the manager's row and
// the department row in one transaction, both under If-Match.
import { defineModel, t, updateGroup, ModelTable } from '../src/index.js';
import { check, freshTable, run } from './common.js';
import { Employee, employee } from './models.js';

const Department = defineModel({
  kind: 'department',
  schema: {
    department: t.string(),
    name: t.string(),
    managerId: t.int32(),
    managerName: t.string(),
    managerEmail: t.string(),
  },
  partitionKey: ['department'],
  rowKey: [{ literal: 'department' }],
});

await run('Denormalization: the manager copied into the department entity', async () => {
  const client = await freshTable('Company');
  const employees = new ModelTable(client, Employee);
  const departments = new ModelTable(client, Department);
  const don = employee('Sales', 1, 'Don', 'Hall');
  await employees.create(don);
  await departments.create({
    department: 'Sales',
    name: 'Sales',
    managerId: 1,
    managerName: 'Don Hall',
    managerEmail: don.email,
  });

  // Change the manager's e-mail and the department's copy together.
  const employeeKeys = Employee.keysOf(don);
  const departmentKeys = Department.keysOf({ department: 'Sales' });
  await updateGroup(client, 'Sales', [employeeKeys.rowKey, departmentKeys.rowKey], ([employeeRow, departmentRow]) => {
    const manager = { ...Employee.fromEntity(employeeRow!), email: 'don.hall@fabrikam.com' };
    const department = Department.fromEntity(departmentRow!);
    return {
      writes: [Employee.toEntity(manager), Department.toEntity({ ...department, managerEmail: manager.email })],
      result: undefined,
    };
  });
  const sales = (await departments.get({ department: 'Sales' }))!;
  check(
    sales.managerEmail === 'don.hall@fabrikam.com',
    'one point read of the department gives the manager’s new e-mail',
  );
  check((await employees.get(don))!.email === sales.managerEmail, 'the copy equals the employee row');
});
