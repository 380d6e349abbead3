// The employee model of the design guide's scenarios, shared by several examples.
import { codecs, defineModel, t } from '../src/index.js';

export const Employee = defineModel({
  kind: 'employee',
  schema: {
    department: t.string(),
    employeeId: t.int32(),
    firstName: t.string(),
    lastName: t.string(),
    email: t.string(),
    salary: t.int64(),
    hired: t.dateTime(),
  },
  partitionKey: ['department'],
  rowKey: [{ literal: 'employee' }, { field: 'employeeId', codec: codecs.uint(8) }],
});

export function employee(department: string, employeeId: number, firstName: string, lastName: string) {
  return {
    department,
    employeeId,
    firstName,
    lastName,
    email: `${firstName}.${lastName}@contoso.com`.toLowerCase(),
    salary: 40_000n + BigInt(employeeId) * 1_000n,
    hired: new Date(Date.UTC(2020, 0, 1 + employeeId)),
  };
}
