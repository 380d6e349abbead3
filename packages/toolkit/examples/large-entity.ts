// Large entities: 3 MiB of data, more than three entities may hold, chunked into Binary
// properties of rows in one partition, read back with a SHA-256 check.
import { randomBytes } from 'node:crypto';
import { IntegrityError, LargeObjectStore, readRaw } from '../src/index.js';
import { check, freshTable, run } from './common.js';

await run('Large entity: a 3 MiB document in chunks with an integrity check', async () => {
  const client = await freshTable('Documents');
  const store = new LargeObjectStore(client);
  const data = randomBytes(3 * 1024 * 1024 + 123);
  const info = await store.put('reports', 'q3.pdf', data);
  console.log(`stored ${info.size} bytes in ${info.chunks} chunk rows, SHA-256 ${info.sha256.slice(0, 16)}…`);
  const back = await store.get('reports', 'q3.pdf');
  check(
    back !== undefined && Buffer.compare(Buffer.from(back), data) === 0,
    'the bytes read back equal the bytes written',
  );
  const smaller = randomBytes(1000);
  await store.put('reports', 'q3.pdf', smaller);
  check(
    Buffer.compare(Buffer.from((await store.get('reports', 'q3.pdf'))!), smaller) === 0,
    'a new version replaces the old one',
  );
  check((await store.collect('reports', 'q3.pdf')) === 0, 'the old version’s chunks were removed');
  // Corrupt a chunk behind the store's back: the read must notice.
  const head = (await store.info('reports', 'q3.pdf'))!;
  const rows = client.listEntities({ queryOptions: { filter: `PartitionKey eq 'reports'` } });
  for await (const row of rows) {
    if (row.rowKey !== 'q3.pdf' && row.rowKey!.includes(head.version.slice(0, 8))) {
      const raw = await readRaw(client, 'reports', row.rowKey!);
      await client.updateEntity(
        {
          ...(raw as object),
          partitionKey: 'reports',
          rowKey: row.rowKey!,
          d00: { value: Buffer.from('tampered').toString('base64'), type: 'Binary' },
        } as never,
        'Merge',
      );
    }
  }
  let detected = false;
  try {
    await store.get('reports', 'q3.pdf');
  } catch (error) {
    detected = error instanceof IntegrityError;
  }
  check(detected, 'a tampered chunk fails the SHA-256 check (IntegrityError)');
});
