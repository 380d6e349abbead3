// The writers of the blob crash test (tests/system/blob/crash.test.ts), each keeping a ledger of what
// it sent and what the server acknowledged, and the check of a blob's content against that ledger
// after a restart. Every writer works on a blob of its own, one request at a time, so the blob's
// content after a crash is determined by the ledger: the last acknowledged version, or the one
// whose request was in flight at the kill (a write the server committed but could not answer).
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { blobSend } from './blob.js';
import type { RawResponse } from './http.js';
import type { RunningServer } from './server.js';

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** What a writer of whole versions (Put Blob, or Put Block then Put Block List) sent and got acknowledged. */
export interface VersionLedger {
  readonly kind: 'put' | 'blocks';
  readonly name: string;
  /** Hash of the last acknowledged version; undefined before the first acknowledgement. */
  acked?: string;
  /** Versions acknowledged. */
  ackedCount: number;
  /** Hash of the version whose commit was sent and not answered (in flight at the kill). */
  inFlight?: string;
}

/** What an appender sent, in order, and how many of those appends were acknowledged. */
export interface AppendLedger {
  readonly kind: 'append';
  readonly name: string;
  readonly sent: Buffer[];
  ackedCount: number;
}

const octetStream = { 'Content-Type': 'application/octet-stream' };

/** A PUT answered 201, or an error saying what came instead (a kill makes the request itself fail). */
async function put(server: RunningServer, target: string, body: Buffer | string, headers: Record<string, string>) {
  const type = typeof body === 'string' ? {} : octetStream;
  const answer = await blobSend(server, { method: 'PUT', target, body, headers: { ...type, ...headers } });
  if (answer.status !== 201) throw new Error(`PUT ${target}: HTTP ${answer.status} ${answer.text.slice(0, 300)}`);
}

/** Put Blob of a new random version, over and over; like the writers below, it throws once a request fails. */
export async function putVersions(server: RunningServer, container: string, ledger: VersionLedger): Promise<void> {
  for (;;) {
    const content = randomBytes(randomInt(1, 1536) * 1024);
    ledger.inFlight = sha256(content);
    await put(server, `${container}/${ledger.name}`, content, { 'x-ms-blob-type': 'BlockBlob' });
    ledger.acked = ledger.inFlight;
    ledger.ackedCount++;
    delete ledger.inFlight;
  }
}

/** Stages 2 to 4 blocks of up to 512 KiB, then commits them with Put Block List, over and over. */
export async function commitBlockLists(server: RunningServer, container: string, ledger: VersionLedger): Promise<void> {
  for (let round = 0; ; round++) {
    const blocks = Array.from({ length: randomInt(2, 5) }, () => randomBytes(randomInt(1, 513) * 1024));
    const ids = blocks.map((_, i) => Buffer.from(`r${String(round).padStart(6, '0')}-b${i}`).toString('base64'));
    for (const [i, block] of blocks.entries()) {
      const target = `${container}/${ledger.name}?comp=block&blockid=${encodeURIComponent(ids[i]!)}`;
      await put(server, target, block, {});
    }
    const list = `<?xml version="1.0" encoding="utf-8"?><BlockList>${ids.map((id) => `<Latest>${id}</Latest>`).join('')}</BlockList>`;
    ledger.inFlight = sha256(Buffer.concat(blocks));
    await put(server, `${container}/${ledger.name}?comp=blocklist`, list, {});
    ledger.acked = ledger.inFlight;
    ledger.ackedCount++;
    delete ledger.inFlight;
  }
}

/** Creates the append blob, then appends blocks of 1 to 64 KiB, over and over. */
export async function appendBlocks(server: RunningServer, container: string, ledger: AppendLedger): Promise<void> {
  const target = `${container}/${ledger.name}`;
  await put(server, target, Buffer.alloc(0), { 'x-ms-blob-type': 'AppendBlob' });
  for (;;) {
    const block = randomBytes(randomInt(1, 65) * 1024);
    ledger.sent.push(block);
    await put(server, `${target}?comp=appendblock`, block, {});
    ledger.ackedCount++;
  }
}

/** GET of the whole blob: its bytes, or undefined when it does not exist (404). */
export async function download(server: RunningServer, container: string, name: string): Promise<Buffer | undefined> {
  const answer: RawResponse = await blobSend(server, { method: 'GET', target: `${container}/${name}` });
  if (answer.status === 404) return undefined;
  assert.equal(answer.status, 200, `${name}: ${answer.text}`);
  assert.equal(Number(answer.headers['content-length']), answer.body.length, `${name}: Content-Length`);
  return answer.body;
}

/** The blob is absent only if nothing was acknowledged, else exactly the acknowledged or the in-flight version. */
export function checkVersion(ledger: VersionLedger, content: Buffer | undefined): void {
  if (content === undefined) {
    assert.equal(ledger.acked, undefined, `${ledger.name}: acknowledged, then lost`);
    return;
  }
  const hash = sha256(content);
  const allowed = [ledger.acked, ledger.inFlight].filter((h) => h !== undefined);
  assert.ok(allowed.includes(hash), `${ledger.name}: ${content.length} bytes that are no version it acknowledged`);
}

/** Every acknowledged append, in order, and after them at most the one in flight. */
export function checkAppends(ledger: AppendLedger, content: Buffer | undefined): void {
  assert.ok(content !== undefined, `${ledger.name}: the append blob is gone`);
  const acked = Buffer.concat(ledger.sent.slice(0, ledger.ackedCount));
  const withInFlight = Buffer.concat(ledger.sent.slice(0, ledger.ackedCount + 1));
  assert.ok(
    content.equals(acked) || content.equals(withInFlight),
    `${ledger.name}: ${content.length} bytes, not the ${ledger.ackedCount} acknowledged appends ` +
      `(${acked.length} bytes) nor those and the one in flight (${withInFlight.length} bytes)`,
  );
}
