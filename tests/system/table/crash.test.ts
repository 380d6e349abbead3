// Durability under kill -9 (the crash tests of docs/architecture.md#threads-and-durability). Sixteen clients drive
// single writes
// and 100-entity batches against an on-disk server; at a seeded random moment the server gets
// SIGKILL; it restarts on the same directory and every key is checked against a ledger of what was
// acknowledged (2xx received) and what was still in flight. Each key is written by one client only,
// one request at a time, so its expected state is exact: the acknowledged version, or the in-flight
// one if that request was applied. A batch is all or nothing across its 100 entities.
// SIGKILL ends the process, not the machine: the OS page cache survives, so this proves that no
// write is acknowledged before its commit, not that the commit was fsynced.
// Rerun a failure with CRASH_SEED=<printed seed> (timing still varies, so choices repeat, kill points only roughly).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../../helpers/server.js';
import { describeResponse, devPath, entityPath, send, type RawRequest, type RawResponse } from '../../helpers/http.js';
import { tableClient, uniqueTableName } from '../../helpers/sdk.js';
import {
  absoluteUrl,
  changesetBody,
  entityResource,
  op,
  postBatch,
  readBatchResponse,
  type EntityBody,
  type ResponsePart,
  type SubRequest,
} from '../../helpers/batch.js';
import { seededRandom, type Random } from '../../query/random.js';

const clientCount = 16;
const keysPerClient = 12;
const batchSize = 100;
const batchChance = 0.2;
const iterationsMax = 20;
/** Stop starting iterations after this long, so the file stays within its CI share. */
const budgetMs = 40_000;
const killDelayMinMs = 50;
const killDelayMaxMs = 900;
/** Clients must notice a dead server quickly; a hung request would otherwise hang the test. */
const settleTimeoutMs = 15_000;

type Props = Record<string, string>;

/** A key's contents: properties (null: absent), the acknowledged ETag, the batch that wrote it. */
interface Version {
  readonly props: Props | null;
  readonly etag?: string;
  readonly batch?: number;
}

interface KeyState {
  readonly pk: string;
  readonly rk: string;
  acked: Version;
  /** The version a request still without an answer would leave, if it was applied. */
  inFlight?: Version;
}

interface PlannedWrite {
  readonly state: KeyState;
  readonly next: Props | null;
}

/** What every client did, and what the server answered. */
class Ledger {
  readonly keys = new Map<string, KeyState>();
  /** Batch partitions and whether any batch on them was acknowledged. */
  readonly batchPartitions = new Map<string, { acknowledged: boolean }>();
  readonly unexpected: string[] = [];
  acknowledged = 0;
  batchesAcknowledged = 0;
  private nextBatch = 0;

  key(pk: string, rk: string): KeyState {
    const id = keyId(pk, rk);
    let state = this.keys.get(id);
    if (state === undefined) {
      state = { pk, rk, acked: { props: null } };
      this.keys.set(id, state);
    }
    return state;
  }

  begin(writes: readonly PlannedWrite[], isBatch: boolean): void {
    const batch = isBatch ? this.nextBatch++ : undefined;
    for (const { state, next } of writes) state.inFlight = { props: next, ...(batch !== undefined ? { batch } : {}) };
    const pk = writes[0]!.state.pk;
    if (isBatch && !this.batchPartitions.has(pk)) this.batchPartitions.set(pk, { acknowledged: false });
  }

  /** The server answered: a 2xx with its ETag, or (undefined) an error that applied nothing. */
  settle(writes: readonly PlannedWrite[], etag: string | undefined, error?: string): void {
    for (const write of writes) {
      if (error === undefined) write.state.acked = { props: write.next, ...(write.next !== null ? { etag } : {}) };
      write.state.inFlight = undefined;
    }
    if (error !== undefined) return void this.unexpected.push(error);
    this.acknowledged++;
    const partition = this.batchPartitions.get(writes[0]!.state.pk);
    if (partition !== undefined) {
      partition.acknowledged = true;
      this.batchesAcknowledged++;
    }
  }
}

const keyId = (pk: string, rk: string) => `${pk}/${rk}`;

interface Planned {
  readonly writes: PlannedWrite[];
  readonly isBatch: boolean;
  readonly send: () => Promise<RawResponse>;
  /** The ETag of a fully successful answer, or an error text. */
  readonly outcome: (res: RawResponse) => { etag: string | undefined } | { error: string };
}

function entityBody(state: KeyState, props: Props): EntityBody {
  return { PartitionKey: state.pk, RowKey: state.rk, ...props };
}

/** One single-entity write chosen for the key's acknowledged state; `value` makes it unique. */
function planSingle(port: number, table: string, random: Random, state: KeyState, value: string): Planned {
  const current = state.acked.props;
  const path = entityPath(table, state.pk, state.rk);
  let request: RawRequest;
  let next: Props | null;
  if (current === null) {
    next = { v: value };
    request = random.pick([
      { method: 'POST', path: devPath(table), headers: { Prefer: 'return-no-content' } },
      { method: 'PUT', path },
      { method: 'MERGE', path },
    ]);
  } else {
    const etag = state.acked.etag!;
    const merged = { ...current, [`m${random.int(3)}`]: value };
    const choice = random.int(5);
    next = choice === 4 ? null : choice % 2 === 0 ? { v: value } : merged;
    request = [
      { method: 'PUT', path },
      { method: 'MERGE', path },
      { method: 'PUT', path, headers: { 'If-Match': etag } },
      { method: 'MERGE', path, headers: { 'If-Match': etag } },
      { method: 'DELETE', path, headers: { 'If-Match': random.pick([etag, '*']) } },
    ][choice]!;
  }
  const writes = [{ state, next }];
  const full: RawRequest = next === null ? request : { ...request, body: entityBody(state, next) };
  return {
    writes,
    isBatch: false,
    send: () => send(port, full),
    outcome: (res) =>
      res.status === 204
        ? { etag: res.headers.etag as string | undefined }
        : { error: `${full.method} ${full.path}: ${describeResponse(res)}` },
  };
}

/** 100 inserts into a new partition, or a rewrite of all 100 entities of an acknowledged one. */
function planBatch(port: number, table: string, random: Random, states: readonly KeyState[], value: string): Planned {
  const tableUrl = absoluteUrl(port, table);
  const fresh = states[0]!.acked.props === null;
  const conditional = !fresh && random.chance(0.5);
  const writes = states.map((state): PlannedWrite => ({
    state,
    next: conditional ? { ...state.acked.props!, h: value } : { g: value },
  }));
  const requests: SubRequest[] = writes.map(({ state, next }) => {
    const url = absoluteUrl(port, entityResource(table, state.pk, state.rk));
    const body = entityBody(state, next!);
    if (fresh) return op.insert(tableUrl, body);
    return conditional ? op.update(url, 'Merge', body, state.acked.etag!) : op.upsert(url, 'Replace', body);
  });
  const batch = changesetBody(requests, random.pick(['js', 'python'] as const));
  return {
    writes,
    isBatch: true,
    send: () => postBatch(port, batch),
    outcome: (res) => {
      const failed = { error: `batch on ${states[0]!.pk}: ${describeResponse(res)}` };
      if (res.status !== 202) return failed;
      let parts: ResponsePart[];
      try {
        parts = readBatchResponse(res).parts;
      } catch (error) {
        return { error: `${failed.error}\n${(error as Error).message}` };
      }
      const etag = parts[0]?.header('ETag');
      const ok = parts.length === batchSize && parts.every((p) => p.status === 204 && p.header('ETag') === etag);
      return ok ? { etag } : failed;
    },
  };
}

/** One client: its own single-write keys and batch partitions, one request at a time, until the server dies. */
async function runClient(port: number, table: string, client: number, random: Random, ledger: Ledger): Promise<void> {
  const singles = Array.from({ length: keysPerClient }, (_, j) => ledger.key(`s${client}`, `k${j}`));
  const acknowledgedBatches: KeyState[][] = [];
  for (let seq = 0; ; seq++) {
    const value = `${client}.${seq}`;
    let planned: Planned;
    let partition: KeyState[] | undefined;
    if (random.chance(batchChance)) {
      const rewrite = acknowledgedBatches.length > 0 && random.chance(0.4);
      partition = rewrite
        ? random.pick(acknowledgedBatches)
        : Array.from({ length: batchSize }, (_, i) =>
            ledger.key(`b${client}-${seq}`, `r${String(i).padStart(2, '0')}`),
          );
      planned = planBatch(port, table, random, partition, value);
    } else {
      planned = planSingle(port, table, random, random.pick(singles), value);
    }
    ledger.begin(planned.writes, planned.isBatch);
    let res: RawResponse;
    try {
      res = await planned.send();
    } catch {
      return; // No answer: the request stays in flight in the ledger.
    }
    const outcome = planned.outcome(res);
    if ('error' in outcome) return ledger.settle(planned.writes, undefined, outcome.error);
    ledger.settle(planned.writes, outcome.etag);
    if (partition !== undefined && !acknowledgedBatches.includes(partition)) acknowledgedBatches.push(partition);
  }
}

interface Observed {
  readonly pk: string;
  readonly props: Props;
  readonly etag: string;
}

/** Every entity of the table, by key id. */
async function readTable(server: RunningServer, table: string): Promise<Map<string, Observed>> {
  const found = new Map<string, Observed>();
  for await (const e of tableClient(server, table).listEntities()) {
    const { partitionKey, rowKey, etag, timestamp: _t, ...props } = e;
    found.set(keyId(partitionKey!, rowKey!), { pk: partitionKey!, props: props as Props, etag });
  }
  return found;
}

interface Verdict {
  readonly problems: string[];
  /** Requests without an answer whose writes turned out applied, and not applied. */
  readonly applied: number;
  readonly notApplied: number;
}

/** Compares what the restarted server holds with the ledger: every key, every batch, every batch partition. */
function check(found: ReadonlyMap<string, Observed>, ledger: Ledger): Verdict {
  const problems = ledger.unexpected.map((e) => `unexpected answer: ${e}`);
  const show = (v: unknown) => JSON.stringify(v);
  const outcomes = new Map<number | string, Set<'applied' | 'notApplied'>>();
  for (const [id, state] of ledger.keys) {
    const seen = found.get(id);
    const isAcked =
      seen === undefined
        ? state.acked.props === null
        : isDeepStrictEqual(seen.props, state.acked.props) && seen.etag === state.acked.etag;
    const isInFlight =
      state.inFlight !== undefined &&
      (seen === undefined ? state.inFlight.props === null : isDeepStrictEqual(seen.props, state.inFlight.props));
    if (!isAcked && !isInFlight) {
      problems.push(
        `${id}: found ${show(seen)}; acknowledged ${show(state.acked)}${state.inFlight ? `, in flight ${show(state.inFlight)}` : ''}`,
      );
    } else if (state.inFlight !== undefined) {
      const request = state.inFlight.batch ?? id;
      outcomes.set(request, (outcomes.get(request) ?? new Set()).add(isAcked ? 'notApplied' : 'applied'));
    }
  }
  for (const id of found.keys()) if (!ledger.keys.has(id)) problems.push(`${id}: present but never written`);
  for (const [request, seen] of outcomes) if (seen.size > 1) problems.push(`batch ${request} was half applied`);
  const perPartition = new Map<string, number>();
  for (const { pk } of found.values()) perPartition.set(pk, (perPartition.get(pk) ?? 0) + 1);
  for (const [pk, { acknowledged }] of ledger.batchPartitions) {
    const count = perPartition.get(pk) ?? 0;
    if (count !== batchSize && (acknowledged || count !== 0))
      problems.push(`partition ${pk}: ${count} entities (acknowledged: ${acknowledged})`);
  }
  const all = [...outcomes.values()];
  return {
    problems,
    applied: all.filter((o) => o.has('applied')).length,
    notApplied: all.filter((o) => o.has('notApplied')).length,
  };
}

async function createTable(server: RunningServer, table: string): Promise<void> {
  const res = await send(server.port, { method: 'POST', path: devPath('Tables'), body: { TableName: table } });
  assert.equal(res.status, 201, describeResponse(res));
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

describe('crash durability', () => {
  test('kill -9 at seeded random moments: acknowledged writes survive, batches are all or nothing', async (t) => {
    const seed = Number(process.env['CRASH_SEED'] ?? Math.floor(Math.random() * 2 ** 32)) >>> 0;
    const random = seededRandom(seed);
    const dir = makeTempDir();
    const started = Date.now();
    let server = await startServer({ location: dir });
    const totals = { iterations: 0, acknowledged: 0, batches: 0, applied: 0, notApplied: 0 };
    try {
      for (let iteration = 0; iteration < iterationsMax && Date.now() - started < budgetMs; iteration++) {
        const context = `seed ${seed} (CRASH_SEED), iteration ${iteration}`;
        const table = uniqueTableName('crash');
        await createTable(server, table);
        const ledger = new Ledger();
        const iterationSeed = random.int(2 ** 32);
        const clients = Array.from({ length: clientCount }, (_, c) =>
          runClient(server.port, table, c, seededRandom((iterationSeed + c * 0x9e3779b9) >>> 0), ledger),
        );
        await sleep(killDelayMinMs + random.int(killDelayMaxMs - killDelayMinMs));
        await server.kill9();
        await withTimeout(Promise.all(clients), settleTimeoutMs, `${context}: clients after the kill`);

        server = await startServer({ location: dir });
        const found = await readTable(server, table).catch((error: Error) => {
          throw new Error(`${context}: reading the table after restart failed: ${error.message}`);
        });
        const verdict = check(found, ledger);
        assert.deepEqual(
          verdict.problems.slice(0, 20),
          [],
          `${context}: ${verdict.problems.length} discrepancies after restart`,
        );
        totals.iterations++;
        totals.acknowledged += ledger.acknowledged;
        totals.batches += ledger.batchesAcknowledged;
        totals.applied += verdict.applied;
        totals.notApplied += verdict.notApplied;
      }
      t.diagnostic(
        `seed ${seed}: ${totals.iterations} kills, ${totals.acknowledged} acknowledged requests (${totals.batches} batches); ` +
          `of the unanswered ones ${totals.applied} were applied, ${totals.notApplied} not`,
      );
      assert.ok(totals.acknowledged > 0, `seed ${seed}: the workload never got an acknowledgement`);
    } finally {
      await server.stop();
      removeDir(dir);
    }
  });

  test('canary: the checker catches a lost acknowledged write, a half-applied batch and a phantom entity', () => {
    const ledger = new Ledger();
    const lost = [{ state: ledger.key('s0', 'k0'), next: { v: '0.0' } }];
    ledger.begin(lost, false);
    ledger.settle(lost, `W/"datetime'2026-01-01T00%3A00%3A00Z'"`);
    const batch = Array.from({ length: batchSize }, (_, i) => ({
      state: ledger.key('b0-1', `r${i}`),
      next: { g: '0.1' },
    }));
    ledger.begin(batch, true);
    const found = new Map<string, Observed>([['s9/ghost', { pk: 's9', props: {}, etag: 'x' }]]);
    for (const { state, next } of batch.slice(0, 50))
      found.set(keyId(state.pk, state.rk), { pk: state.pk, props: next, etag: 'x' });
    const { problems } = check(found, ledger);
    assert.equal(problems.length, 4, problems.join('\n'));
    assert.match(problems[0]!, /^s0\/k0: found undefined; acknowledged/);
    assert.match(problems[1]!, /^s9\/ghost: present but never written/);
    assert.match(problems[2]!, /^batch 0 was half applied/);
    assert.match(problems[3]!, /^partition b0-1: 50 entities/);
  });

  test('SIGTERM lets in-flight requests finish, then exits 0; their writes are there after restart', async () => {
    const dir = makeTempDir();
    try {
      const server = await startServer({ location: dir });
      const table = uniqueTableName('term');
      await createTable(server, table);
      // Each request's head goes out with Expect: 100-continue; once the server has answered
      // 100 Continue for all of them (it read their heads, so they are in flight), SIGTERM. The
      // bodies trickle in after that, so every request is mid-upload when the signal arrives.
      // What the server promises is only for requests in flight: a connection it has not yet
      // accepted or read from when SIGTERM arrives may be reset (that is not waited for here).
      let continued = 0;
      let allContinued: () => void = () => {};
      const inFlight = new Promise<void>((resolve) => (allContinued = resolve));
      const slow = { chunkDelayMs: 60, onContinue: () => ++continued === 16 && allContinued() };
      const requests = Array.from({ length: 16 }, (_, i): Promise<RawResponse> => {
        if (i % 2 === 0) {
          const body = Buffer.from(JSON.stringify({ PartitionKey: 'single', RowKey: `r${i}`, v: i }));
          return send(server.port, {
            method: 'POST',
            path: devPath(table),
            body,
            headers: { Prefer: 'return-no-content' },
            chunkBytes: Math.ceil(body.length / 6),
            ...slow,
          });
        }
        const batch = changesetBody(
          Array.from({ length: batchSize }, (_, j) =>
            op.insert(absoluteUrl(server.port, table), { PartitionKey: `batch${i}`, RowKey: `r${j}` }),
          ),
        );
        return postBatch(server.port, batch, { chunkBytes: Math.ceil(batch.body.length / 6), ...slow });
      });
      const answered = Promise.all(requests);
      // A request answered without 100 Continue (an error) ends the wait too; the asserts below say why.
      await Promise.race([inFlight, answered]);
      const exitCode = server.stop();
      const responses = await answered;
      responses.forEach((res, i) => {
        assert.equal(res.status, i % 2 === 0 ? 204 : 202, `request ${i}: ${describeResponse(res)}`);
        if (i % 2 === 1)
          assert.ok(
            readBatchResponse(res).parts.every((p) => p.status === 204),
            res.text,
          );
      });
      assert.equal(await exitCode, 0, `exit code after SIGTERM\n${server.output().stderr}`);

      const restarted = await startServer({ location: dir });
      try {
        let count = 0;
        for await (const _ of tableClient(restarted, table).listEntities()) count++;
        assert.equal(count, 8 + 8 * batchSize);
      } finally {
        await restarted.stop();
      }
    } finally {
      removeDir(dir);
    }
  });

  test('SIGTERM with keep-alive clients: the request in flight is answered, then the process exits 0', async () => {
    const server = await startServer({ inMemory: true });
    const agent = new http.Agent({ keepAlive: true });
    try {
      // A first request leaves an idle keep-alive connection; the second is in flight at SIGTERM.
      const first = await send(server.port, { method: 'GET', path: devPath('Tables'), agent });
      assert.equal(first.status, 200, describeResponse(first));
      assert.equal(first.headers.connection, 'keep-alive');
      let inFlight: () => void = () => {};
      const continued = new Promise<void>((resolve) => (inFlight = resolve));
      const body = Buffer.from(JSON.stringify({ TableName: uniqueTableName('keep') }));
      // The body trickles in over ~300 ms, so the request is most likely still being read at SIGTERM.
      const trickle = { chunkBytes: Math.ceil(body.length / 6), chunkDelayMs: 60 };
      const request = { method: 'POST', path: devPath('Tables'), body, agent, ...trickle };
      const answer = send(server.port, { ...request, onContinue: () => inFlight() });
      await continued;
      const exitCode = server.stop();
      const res = await answer;
      assert.equal(res.status, 201, describeResponse(res));
      // Connection: close when the server learnt of the shutdown before answering (usually; under
      // load it may answer first, with keep-alive, and then close the idle connection).
      // Exit 0: the keep-alive connections ended by themselves, not when the shutdown grace ran out.
      assert.equal(await exitCode, 0, server.output().stderr);
    } finally {
      agent.destroy();
    }
  });
});
