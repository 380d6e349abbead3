// Page blob durability under kill -9, on SQLite and PostgreSQL: concurrent clients write and clear
// random pages of a page blob of their own, one request at a time, each keeping the bytes its
// acknowledged writes make (a model) and the write in flight. The server gets SIGKILL a random
// moment after every writer had an acknowledgement; after a restart every blob reads as its model,
// or as its model with the in-flight write applied (a write committed but not answered), and its
// page ranges are the pages written and not cleared. Then reclaim passes as if hours had passed
// leave no content nothing names, and remove none an extent names.
// SIGKILL ends the process, not the machine: this proves nothing is acknowledged before its
// commit, not that the commit was fsynced.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { blobSend, uniqueContainerName } from '../../helpers/blob.js';
import { assertContentWhole, storeEngines } from '../../helpers/blob-store-check.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const writers = 4;
const pageBytes = 4096;
const pagesPerBlob = 64;
const killDelayMaxMs = 1_500;
const firstAcksWithinMs = 60_000;

interface PageWrite {
  readonly first: number;
  readonly count: number;
  /** undefined: a clear. */
  readonly bytes: Buffer | undefined;
}

interface PageLedger {
  readonly name: string;
  /** The blob as its acknowledged writes made it. */
  readonly model: Buffer;
  /** Pages written and not cleared since. */
  readonly written: boolean[];
  ackedCount: number;
  inFlight?: PageWrite;
}

function apply(model: Buffer, written: boolean[], write: PageWrite): void {
  const [from, to] = [write.first * pageBytes, (write.first + write.count) * pageBytes];
  if (write.bytes === undefined) model.fill(0, from, to);
  else write.bytes.copy(model, from);
  written.fill(write.bytes !== undefined, write.first, write.first + write.count);
}

async function writePages(server: RunningServer, container: string, ledger: PageLedger): Promise<void> {
  const target = `${container}/${ledger.name}`;
  const created = await blobSend(server, {
    method: 'PUT',
    target,
    headers: { 'x-ms-blob-type': 'PageBlob', 'x-ms-blob-content-length': String(pagesPerBlob * pageBytes) },
  });
  if (created.status !== 201) throw new Error(`create ${target}: HTTP ${created.status}`);
  for (;;) {
    const first = randomInt(0, pagesPerBlob);
    const count = randomInt(1, Math.min(16, pagesPerBlob - first) + 1);
    const write: PageWrite = { first, count, bytes: randomInt(4) === 0 ? undefined : randomBytes(count * pageBytes) };
    ledger.inFlight = write;
    const range = `bytes=${first * pageBytes}-${(first + count) * pageBytes - 1}`;
    const answer = await blobSend(server, {
      method: 'PUT',
      target: `${target}?comp=page`,
      body: write.bytes ?? '',
      headers: {
        'x-ms-page-write': write.bytes === undefined ? 'clear' : 'update',
        'x-ms-range': range,
        'Content-Type': 'application/octet-stream',
      },
    });
    if (answer.status !== 201)
      throw new Error(`Put Page ${target}: HTTP ${answer.status} ${answer.text.slice(0, 300)}`);
    apply(ledger.model, ledger.written, write);
    ledger.ackedCount++;
    delete ledger.inFlight;
  }
}

async function checkAfterRestart(server: RunningServer, container: string, ledger: PageLedger): Promise<void> {
  const target = `${container}/${ledger.name}`;
  const read = await blobSend(server, { method: 'GET', target });
  assert.equal(read.status, 200, `${ledger.name}: HTTP ${read.status}`);
  const candidates = [{ model: ledger.model, written: ledger.written }];
  if (ledger.inFlight !== undefined) {
    const model = Buffer.from(ledger.model);
    const written = [...ledger.written];
    apply(model, written, ledger.inFlight);
    candidates.push({ model, written });
  }
  const match = candidates.find((candidate) => candidate.model.equals(read.body));
  assert.ok(match !== undefined, `${ledger.name}: reads as its acknowledged pages (or with the write in flight)`);
  const listed = await blobSend(server, { method: 'GET', target: `${target}?comp=pagelist` });
  const covered = new Array<boolean>(pagesPerBlob).fill(false);
  for (const [, start, end] of listed.text.matchAll(/<PageRange><Start>(\d+)<\/Start><End>(\d+)<\/End>/g)) {
    covered.fill(true, Number(start) / pageBytes, (Number(end) + 1) / pageBytes);
  }
  assert.deepEqual(covered, match.written, `${ledger.name}: its page ranges are the pages written`);
}

for (const engine of storeEngines) {
  describe(`page blob crash on ${engine.label}`, () => {
    test('kill -9 under Put Page writes and clears: acknowledged pages whole, nothing orphaned', async (t) => {
      const { options, at, cleanup } = await engine.data();
      const container = uniqueContainerName('pagecrash');
      const ledgers: PageLedger[] = Array.from({ length: writers }, (_, i) => ({
        name: `disk-${i}`,
        model: Buffer.alloc(pagesPerBlob * pageBytes),
        written: new Array<boolean>(pagesPerBlob).fill(false),
        ackedCount: 0,
      }));
      try {
        const first = await startServer(options);
        const created = await blobSend(first, { method: 'PUT', target: `${container}?restype=container` });
        assert.equal(created.status, 201, created.text);
        let killing = false;
        const errors: string[] = [];
        const running = ledgers.map((ledger) =>
          writePages(first, container, ledger).catch((error: unknown) => {
            if (!killing) errors.push(String(error));
          }),
        );
        const deadline = Date.now() + firstAcksWithinMs;
        while (ledgers.some((l) => l.ackedCount === 0) && errors.length === 0 && Date.now() < deadline) await delay(20);
        const delayMs = randomInt(killDelayMaxMs);
        await delay(delayMs);
        killing = true;
        await first.kill9();
        await Promise.all(running);
        assert.deepEqual(errors, [], 'no writer failed before the kill');
        const acked = ledgers.reduce((sum, l) => sum + l.ackedCount, 0);
        t.diagnostic(`killed ${delayMs} ms after every writer's first acknowledgement: ${acked} Put Page acknowledged`);

        const second = await startServer(options);
        try {
          for (const ledger of ledgers) await checkAfterRestart(second, container, ledger);
        } finally {
          await second.stop();
        }
        t.diagnostic(await assertContentWhole(at));
      } finally {
        await cleanup();
      }
    });
  });
}
