// How much memory a server holds while it takes one large blob: a 1 GiB upload, once as one
// streamed Put Blob and once as 256 Put Block requests of 4 MiB (4 in flight) and a Put Block List,
// while the resident set size of the process serving blobs is sampled from /proc/PID/status. A
// server that streams stays near its idle size; one that buffers grows by the blob's size.
import { BlobHttpClient } from './blob-client.js';
import { putBlob } from './blob-scenarios.js';
import { expectStatus, keepAliveAgent } from './client.js';
import { residentKiB } from './proc-stat.js';
import { waitForQuiet, type BenchServer, type ServerKind } from './servers.js';

/** The --scenarios name that asks for this measurement. */
export const uploadRssProbe = 'blob-upload-rss-1g';
const uploadBytes = 1024 * 1024 * 1024;
const blockBytes = 4 * 1024 * 1024;
const blocksInFlight = 4;
const sampleEveryMs = 50;
const quietWaitMaxMs = 15_000;

export interface UploadMemoryRecord {
  server: ServerKind;
  /** How the GiB went up. */
  upload: string;
  bytes: number;
  seconds?: number;
  mibPerSec?: number;
  rssBeforeMiB?: number;
  rssPeakMiB?: number;
  samples: number;
  error?: string;
}

/** Both uploads on every server with a Blob service, one server after the other. */
export async function measureUploadMemory(
  servers: readonly BenchServer[],
  requestTimeoutMs: number,
): Promise<UploadMemoryRecord[]> {
  const records: UploadMemoryRecord[] = [];
  let runId = 0;
  for (const server of servers) {
    if (server.blob === undefined || server.blobPid === undefined || server.exitReason() !== undefined) continue;
    for (const [upload, send] of uploads) {
      await waitForQuiet(servers, server, quietWaitMaxMs);
      const agent = keepAliveAgent(blocksInFlight);
      const blob = new BlobHttpClient(server.blob, agent, requestTimeoutMs);
      const container = `bench-rss-${++runId}`;
      const query = { restype: 'container' };
      try {
        await expectStatus('create container', blob.send({ method: 'PUT', resource: container, query }), 201);
        const record = await sampled(server.blobPid, () => send(blob, `${container}/big`));
        records.push({ server: server.kind, upload, bytes: uploadBytes, ...record });
        await blob.send({ method: 'DELETE', resource: container, query });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        records.push({ server: server.kind, upload, bytes: uploadBytes, samples: 0, error: message });
      } finally {
        agent.destroy();
        server.noteWrites();
      }
      const last = records.at(-1)!;
      process.stderr.write(`${server.kind} ${upload}: ${last.error ?? `peak RSS ${last.rssPeakMiB} MiB`}\n`);
    }
  }
  return records;
}

const uploads: readonly [string, (blob: BlobHttpClient, resource: string) => Promise<unknown>][] = [
  ['one Put Blob', (blob, resource) => putBlob(blob, resource, uploadBytes)],
  [`Put Block ×${uploadBytes / blockBytes} (4 MiB, ${blocksInFlight} in flight) + Put Block List`, putInBlocks],
];

async function putInBlocks(blob: BlobHttpClient, resource: string): Promise<void> {
  const ids = Array.from({ length: uploadBytes / blockBytes }, (_, i) =>
    Buffer.from(`block-${String(i).padStart(6, '0')}`).toString('base64'),
  );
  let next = 0;
  const stageNext = async (): Promise<void> => {
    while (next < ids.length) {
      const blockid = ids[next++]!;
      const staged = blob.send({
        method: 'PUT',
        resource,
        query: { comp: 'block', blockid },
        body: { streamedBytes: blockBytes },
      });
      await expectStatus('put block', staged, 201);
    }
  };
  await Promise.all(Array.from({ length: blocksInFlight }, stageNext));
  const list = `<?xml version="1.0" encoding="utf-8"?><BlockList>${ids.map((id) => `<Latest>${id}</Latest>`).join('')}</BlockList>`;
  const committed = blob.send({
    method: 'PUT',
    resource,
    query: { comp: 'blocklist' },
    headers: { 'content-type': 'application/xml' },
    body: list,
  });
  await expectStatus('put block list', committed, 201);
}

/** Runs `work` while sampling the RSS of `pid`; the RSS before, the peak, the transfer rate. */
async function sampled(
  pid: number,
  work: () => Promise<unknown>,
): Promise<Omit<UploadMemoryRecord, 'server' | 'upload' | 'bytes'>> {
  const before = await residentKiB(pid);
  let peak = before ?? 0;
  let samples = 0;
  const timer = setInterval(() => {
    void residentKiB(pid).then((kib) => {
      samples++;
      if (kib !== undefined) peak = Math.max(peak, kib);
    });
  }, sampleEveryMs);
  const started = performance.now();
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  const seconds = (performance.now() - started) / 1000;
  const after = await residentKiB(pid);
  peak = Math.max(peak, after ?? 0);
  const mib = (kib: number | undefined) => (kib === undefined ? undefined : Math.round(kib / 1024));
  return {
    seconds,
    mibPerSec: uploadBytes / (1024 * 1024) / seconds,
    ...(before === undefined ? {} : { rssBeforeMiB: mib(before)! }),
    rssPeakMiB: mib(peak)!,
    samples,
  };
}
