// The Blob service under Cerulean's own observation: metrics count its operations under their
// Storage Analytics names and the bytes of blob content uploaded and downloaded, fault rules pick
// blob operations by name and container, and the throttle admits requests against a bucket per
// blob (the service's 500 requests/s target for a single blob), and /_insights finds small blocks
// and large blobs downloaded whole again and again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { blobSend, blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { leaseRefusalsMin, repeatedReadsMin, smallBlocksMin } from '../../../src/observe/blob-insights.js';
import { describeRun, runCli } from '../../helpers/cli.js';
import { insights, sample, scrape } from '../../helpers/metrics.js';
import { assertQueueError, childText, xmlOf } from '../../helpers/queue.js';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../../helpers/server.js';

const blockId = (n: number): string => Buffer.from(`block-${String(n).padStart(4, '0')}`).toString('base64');

async function createContainer(server: RunningServer, container: string): Promise<void> {
  assert.equal((await blobSend(server, { method: 'PUT', target: `${container}?restype=container` })).status, 201);
}

async function putBlob(server: RunningServer, path: string, body: Buffer) {
  return blobSend(server, { method: 'PUT', target: path, headers: { 'x-ms-blob-type': 'BlockBlob' }, body });
}

describe('/_metrics: blob operations and bytes', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true });
  });
  after(async () => {
    await server?.stop();
  });

  test('operations by name and status; bytes uploaded by operation, bytes downloaded by Get Blob', async () => {
    const container = uniqueContainerName('metrics');
    await createContainer(server, container);
    assert.equal((await putBlob(server, `${container}/whole`, Buffer.alloc(3000, 1))).status, 201);
    for (const [n, size] of [
      [1, 1000],
      [2, 500],
    ] as const) {
      const target = `${container}/blocks?comp=block&blockid=${encodeURIComponent(blockId(n))}`;
      assert.equal((await blobSend(server, { method: 'PUT', target, body: Buffer.alloc(size, n) })).status, 201);
    }
    const list = `<?xml version="1.0" encoding="utf-8"?><BlockList><Latest>${blockId(1)}</Latest><Latest>${blockId(2)}</Latest></BlockList>`;
    const committed = await blobSend(server, {
      method: 'PUT',
      target: `${container}/blocks?comp=blocklist`,
      body: list,
    });
    assert.equal(committed.status, 201, committed.text);
    // A whole read through the official SDK, a range read raw, and a Get Blob of a missing blob.
    const download = await blobServiceClient(server).getContainerClient(container).getBlobClient('whole').download();
    let downloaded = 0;
    for await (const chunk of download.readableStreamBody!) downloaded += (chunk as Buffer).length;
    assert.equal(downloaded, 3000);
    const range = await blobSend(server, {
      method: 'GET',
      target: `${container}/blocks`,
      headers: { 'x-ms-range': 'bytes=0-99' },
    });
    assert.equal(range.status, 206);
    assert.equal((await blobSend(server, { method: 'GET', target: `${container}/missing` })).status, 404);

    const text = await scrape(server.port);
    const requests = (operation: string, status: string) =>
      sample(text, 'cerulean_requests_total', { operation, status });
    assert.equal(requests('CreateContainer', '201'), 1);
    assert.equal(requests('PutBlob', '201'), 1);
    assert.equal(requests('PutBlock', '201'), 2);
    assert.equal(requests('PutBlockList', '201'), 1);
    assert.equal(requests('GetBlob', '200'), 1);
    assert.equal(requests('GetBlob', '206'), 1);
    assert.equal(requests('GetBlob', '404'), 1);
    const uploaded = (operation: string) => sample(text, 'cerulean_blob_uploaded_bytes_total', { operation });
    assert.equal(uploaded('PutBlob'), 3000);
    assert.equal(uploaded('PutBlock'), 1500);
    assert.equal(uploaded('PutBlockList'), Buffer.byteLength(list));
    // The SDK's whole read and the raw range: 3000 + 100 bytes; a 404's error body is no blob content.
    assert.equal(sample(text, 'cerulean_blob_downloaded_bytes_total', { operation: 'GetBlob' }), 3100);
  });
});

describe('fault rules name blob operations and containers', () => {
  let server: RunningServer;
  let dir: string;
  const faulted = uniqueContainerName('faulted');
  before(async () => {
    dir = makeTempDir();
    const file = join(dir, 'faults.json');
    const rules = [
      { kind: 'serverBusy', operation: 'PutBlob', table: faulted, every: 1 },
      { kind: 'internalError', operation: 'GetBlob', every: 2 },
    ];
    writeFileSync(file, JSON.stringify({ rules }));
    server = await startServer({ inMemory: true, args: ['--faults', file] });
  });
  after(async () => {
    await server?.stop();
    removeDir(dir);
  });

  test('PutBlob fails in the named container only; every second GetBlob fails; nothing faulted was written', async () => {
    const other = uniqueContainerName('other');
    for (const container of [faulted, other]) await createContainer(server, container);
    assertQueueError(await putBlob(server, `${faulted}/b`, Buffer.from('x')), 503, 'ServerBusy');
    assert.equal((await putBlob(server, `${other}/b`, Buffer.from('hello'))).status, 201);
    const first = await blobSend(server, { method: 'GET', target: `${other}/b` });
    assert.equal(first.status, 200);
    assert.equal(first.text, 'hello');
    assertQueueError(await blobSend(server, { method: 'GET', target: `${other}/b` }), 500, 'InternalError');
    // The faulted Put Blob was not executed: the blob does not exist (every other GetBlob passes).
    assertQueueError(await blobSend(server, { method: 'GET', target: `${faulted}/b` }), 404, 'BlobNotFound');
    const text = await scrape(server.port);
    assert.equal(sample(text, 'cerulean_faults_injected_total', { kind: 'serverBusy', operation: 'PutBlob' }), 1);
    assert.equal(sample(text, 'cerulean_faults_injected_total', { kind: 'internalError', operation: 'GetBlob' }), 1);
  });
});

describe('--throttle: a bucket per blob', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true, args: ['--throttle', 'blob=2,account=100000'] });
  });
  after(async () => {
    await server?.stop();
  });

  test("requests to one blob past its target get 503 ServerBusy; another blob's requests pass", async () => {
    const container = uniqueContainerName('thr');
    await createContainer(server, container);
    const startedMs = Date.now();
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await putBlob(server, `${container}/hot`, Buffer.from(`v${i}`)));
    const seconds = (Date.now() - startedMs) / 1000;
    const passed = answers.filter((answer) => answer.status === 201);
    // The bucket holds 2 and refills 2 a second: at most what came back meanwhile passes.
    assert.ok(passed.length <= 2 + Math.ceil(2 * seconds), `${passed.length} passed in ${seconds.toFixed(3)} s`);
    if (seconds < 1) assert.ok(passed.length < 8, 'the third of eight requests in under a second is refused');
    for (const refused of answers.filter((answer) => answer.status !== 201)) {
      assertQueueError(refused, 503, 'ServerBusy');
      assert.match(childText(xmlOf(refused), 'Message') ?? '', /^The server is currently unable to receive requests/);
    }
    assert.equal((await putBlob(server, `${container}/cold`, Buffer.from('c'))).status, 201);
    const text = await scrape(server.port);
    assert.equal(sample(text, 'cerulean_throttled_requests_total', { scope: 'blob' }), 8 - passed.length);
  });
});

describe('/_insights: blob traffic', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true });
  });
  after(async () => {
    await server?.stop();
  });

  test('small blocks, a large blob read whole again and again, lease refusals; not ranges, not tools', async () => {
    const container = uniqueContainerName('ins');
    await createContainer(server, container);
    for (let n = 0; n < smallBlocksMin; n++) {
      const target = `${container}/small?comp=block&blockid=${encodeURIComponent(blockId(n))}`;
      assert.equal((await blobSend(server, { method: 'PUT', target, body: Buffer.alloc(1024, n) })).status, 201);
    }
    const large = Buffer.alloc(1024 * 1024, 7);
    for (const name of ['large', 'ranged', 'tooled']) {
      assert.equal((await putBlob(server, `${container}/${name}`, large)).status, 201);
    }
    const read = async (name: string, headers: Record<string, string> = {}) => {
      const answer = await blobSend(server, { method: 'GET', target: `${container}/${name}`, headers });
      assert.ok(answer.status === 200 || answer.status === 206, answer.text);
    };
    for (let i = 0; i < repeatedReadsMin; i++) {
      await read('large');
      await read('ranged', { 'x-ms-range': 'bytes=0-1048575' });
      await read('tooled', { 'User-Agent': 'cerulean-cli/1.0' });
    }
    // A blob leased forever, written again and again without the lease: 412 LeaseIdMissing each time.
    const lease = { 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '-1' };
    assert.equal(
      (await blobSend(server, { method: 'PUT', target: `${container}/large?comp=lease`, headers: lease })).status,
      201,
    );
    for (let i = 0; i < leaseRefusalsMin; i++) {
      assertQueueError(await putBlob(server, `${container}/large`, Buffer.from('x')), 412, 'LeaseIdMissing');
    }
    const report = await insights(server.port);
    const blobFindings = report.findings.filter((finding) => finding.container === container);
    const small = blobFindings.filter((finding) => finding.kind === 'small-blocks');
    assert.equal(small.length, 1, JSON.stringify(blobFindings));
    assert.equal(small[0]!.evidence['smallPutBlocks'], smallBlocksMin);
    const repeated = blobFindings.filter((finding) => finding.kind === 'repeated-whole-read');
    assert.deepEqual(
      repeated.map((finding) => [finding.blob, finding.evidence['reads'], finding.evidence['bytes']]),
      [['large', repeatedReadsMin, large.length]],
    );
    const leases = blobFindings.filter((finding) => finding.kind === 'lease-conflicts');
    assert.deepEqual(
      leases.map((finding) => finding.evidence),
      [{ refusals: leaseRefusalsMin, LeaseIdMissing: leaseRefusalsMin }],
    );
    assert.equal(report.counts['small-blocks'], 1);
    assert.equal(report.counts['repeated-whole-read'], 1);
    const text = await scrape(server.port);
    assert.equal(sample(text, 'cerulean_insights_findings', { kind: 'repeated-whole-read' }), 1);
    const cli = await runCli(['insights', '-c', server.connectionString]);
    assert.equal(cli.code, 0, describeRun(cli));
    assert.match(cli.stdout, new RegExp(`^Container devstoreaccount1/${container}$`, 'm'));
  });
});
