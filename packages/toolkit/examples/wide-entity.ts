// Wide entities: 600 properties do not fit one entity (252 at most); they are split across rows
// of one partition in one transaction and read back whole.
import { WideEntityStore, type WireProperties } from '../src/index.js';
import { check, freshTable, run } from './common.js';

await run('Wide entity: 600 properties across rows of one partition', async () => {
  const store = new WideEntityStore(await freshTable('Wide'));
  const properties: WireProperties = {};
  for (let i = 0; i < 600; i++) properties[`metric${String(i).padStart(3, '0')}`] = { value: i * 1.5, type: 'Double' };
  properties.label = { value: 'rack 12', type: 'String' };
  await store.write('devices', 'device-42', properties);
  const back = await store.read('devices', 'device-42');
  check(Object.keys(back ?? {}).length === 601, 'all 601 properties read back from one range query');
  check(Number(back?.metric599?.value) === 898.5 && back?.label?.value === 'rack 12', 'values survive the split');
  delete properties.metric599;
  for (let i = 0; i < 400; i++) delete properties[`metric${String(i).padStart(3, '0')}`];
  await store.write('devices', 'device-42', properties);
  check(
    Object.keys((await store.read('devices', 'device-42')) ?? {}).length === 200,
    'a narrower rewrite drops the parts it no longer needs',
  );
});
