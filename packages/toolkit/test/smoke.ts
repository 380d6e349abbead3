import { startServer } from './servers.js';
import { connect, ensureTable, defineModel, t, codecs } from '../src/index.js';
import { IndexedTable } from '../src/patterns/intra-partition-index.js';
for (const kind of ['cerulean', 'azurite'] as const) {
  const server = await startServer(kind);
  try {
    const client = connect(server.connectionString, 'Smoke' + kind);
    await ensureTable(client);
    const Employee = defineModel({
      kind: 'employee',
      schema: { department: t.string(), id: t.int32(), email: t.string(), salary: t.int64(), rate: t.double(), hired: t.dateTime() },
      partitionKey: ['department'],
      rowKey: [{ literal: 'emp' }, { field: 'id', codec: codecs.uint(6) }],
    });
    const table = new IndexedTable(client, Employee, { email: { key: ['email'], unique: true } });
    await table.create({ department: 'Sales/EU', id: 7, email: 'a@x.com', salary: 2n ** 40n, rate: 2, hired: new Date() });
    console.log(kind, await table.get({ department: 'Sales/EU', id: 7 }));
    await table.update({ department: 'Sales/EU', id: 7 }, (e) => ({ ...e, email: 'b@x.com' }));
    console.log(kind, await table.findBy('email', { department: 'Sales/EU', email: 'b@x.com' }));
    console.log(kind, 'verify', await table.verifyPartition({ department: 'Sales/EU' }));
    await table.delete({ department: 'Sales/EU', id: 7 });
    console.log(kind, 'after delete', await table.listPartition({ department: 'Sales/EU' }), await table.verifyPartition({ department: 'Sales/EU' }));
  } finally {
    await server.stop();
  }
}
