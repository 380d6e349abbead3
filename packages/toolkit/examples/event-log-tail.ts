// Log tail: events keyed by inverted ticks come back newest first, so the latest n events are
// the first page of one partition query.
import { logTailModel, ModelTable, newerThan, newest, newEventId, t } from '../src/index.js';
import { check, freshTable, run } from './common.js';

const Event = logTailModel('event', { level: t.string(), message: t.string() });

await run('Log tail: the most recent events first', async () => {
  const events = new ModelTable(await freshTable('Events'), Event);
  const start = Date.UTC(2026, 10, 23, 12, 0, 0);
  for (let i = 0; i < 30; i++) {
    await events.create({
      stream: 'web-01',
      at: new Date(start + i * 1_000),
      id: newEventId(),
      level: i % 10 === 0 ? 'warn' : 'info',
      message: `event ${i}`,
    });
  }
  const latest = await newest(events, { stream: 'web-01' }, 5);
  console.log('latest:', latest.map((e) => e.message).join(', '));
  check(
    latest.map((e) => e.message).join(',') === 'event 29,event 28,event 27,event 26,event 25',
    'the 5 newest events, newest first, from one page',
  );
  const recent = await newerThan(events, { stream: 'web-01' }, new Date(start + 26_500));
  check(recent.length === 3, 'events newer than 12:00:26.5 are the last three');
});
