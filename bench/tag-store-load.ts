// The bulk loader of blob-find-tags.ts for Cerulean: tagged 1-byte blobs put through the store
// contract (BlobStore.putBlob, blob-store.ts) in this process while the server is stopped, many
// writes in flight so the engine commits them in groups. Through HTTP a busy machine puts a few
// hundred blobs a second; 1,000,000 so would take hours. Each blob is written as Put Blob writes
// it: one block, the record's state copied from blob 0 (put through HTTP first) with its own tags,
// the index tags with the record.
import { performance } from 'node:perf_hooks';
import { devAccountName } from './client.js';
import { decodeBlobState, encodeBlobState } from '../src/blob/state/blob.js';
import type { IndexTags } from '../src/storage/blob-store.js';
import { openEngine } from '../src/storage/engine.js';
import { newEtag } from '../src/wire/version-etag.js';
import { StorageError } from '../src/errors.js';

export interface TaggedBlobPlan {
  readonly container: string;
  readonly nameOf: (i: number) => string;
  readonly tagsOf: (i: number) => IndexTags;
}

/**
 * Writes in flight at once: enough for SQLite's group commits to fill; on PostgreSQL its pool
 * (poolConnectionsMax, connection.ts): on a loaded machine more wait for a connection past its timeout.
 */
const putsInFlight = { sqlite: 256, postgres: 16 };
/** Tries of one put that the store answers ServerBusy (it wrote nothing: connection.ts). */
const busyTriesMax = 5;
const body = Buffer.from('x');
const progressEvery = 100_000;

/** Puts blobs `from` (>= 1) up to `to` of `plan` into the store at `config`; blob 0 must exist. */
export async function loadThroughStore(
  config: { readonly location: string | undefined; readonly database: string | undefined },
  plan: TaggedBlobPlan,
  from: number,
  to: number,
): Promise<void> {
  const engine = await openEngine(config);
  try {
    const { blobs } = engine;
    const first = await blobs.getBlob(devAccountName, {
      container: plan.container,
      name: plan.nameOf(0),
      snapshot: '',
    });
    if (first === undefined) throw new Error('blob 0, whose state the loader copies, is not there');
    const template = decodeBlobState(first.state);
    let next = from;
    const started = performance.now();
    const lane = async (): Promise<void> => {
      while (next < to) {
        const i = next++;
        const tags = plan.tagsOf(i);
        const nowMs = Date.now();
        const content = await blobs.writeContent(
          (async function* () {
            yield body;
          })(),
        );
        const record = {
          container: plan.container,
          name: plan.nameOf(i),
          snapshot: '',
          etag: newEtag(nowMs),
          lastModifiedMs: nowMs,
          sizeBytes: body.length,
          state: encodeBlobState({ ...template, tags }),
          indexTags: tags,
        };
        const outcome = await busyRetried(() =>
          blobs.putBlob(devAccountName, record, { kind: 'replace', blocks: [{ blockId: '', content }] }, null),
        );
        if (outcome !== 'ok') throw new Error(`put of blob ${i}: ${outcome}`);
        if ((i + 1) % progressEvery === 0) {
          const perS = (i + 1 - from) / ((performance.now() - started) / 1000);
          process.stderr.write(`  store load: ${i + 1} blobs (${perS.toFixed(0)}/s)\n`);
        }
      }
    };
    const lanes = config.database === undefined ? putsInFlight.sqlite : putsInFlight.postgres;
    await Promise.all(Array.from({ length: lanes }, lane));
  } finally {
    await engine.close();
  }
}

/** `put`, again while the store answers ServerBusy (a connection not had in time), up to busyTriesMax. */
async function busyRetried<T>(put: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await put();
    } catch (error) {
      if (!(error instanceof StorageError && error.code === 'ServerBusy') || tries >= busyTriesMax) throw error;
    }
  }
}
