// A child process for the blob durability tests (tests/storage/blob-durability.test.ts,
// tests/storage/blob-sqlite.test.ts): opens a SQLite store at a data directory and, from several
// loops at once, writes content and commits blobs (Put Blob, staged blocks then Put Block List,
// Append Block), now and then writing content it never commits. It prints a line before each
// commit, `intent <name> <etag> <sha256 of the whole blob> <size>`, and once the commit is
// acknowledged, `ack <name> <etag> <sha256> <size>`. Usage:
//   node blob-load.js <data directory> [<commits to make, then exit>]
import { createHash, randomBytes } from 'node:crypto';
import type { Block, BlobRecord, BlobStore, ContentChange } from '../../src/storage/blob-store.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';

const account = 'acct';
const container = 'load';
const loops = 3;
const chunkBytes = 64 * 1024;

const [location, commitsArg] = process.argv.slice(2);
const commitsMax = commitsArg === undefined ? Number.POSITIVE_INFINITY : Number(commitsArg);
const tables = await SqliteStore.open({ location: location! });
const blobs = await tables.openBlobStore();
await blobs.createContainer(account, { name: container, etag: '"c"', lastModifiedMs: 0, state: '' });
process.stdout.write('ready\n');

let commits = 0;
let etags = 0;

/** Random content of `sizeBytes`, streamed in chunks; `bytes` receives each chunk. */
async function write(store: BlobStore, sizeBytes: number, bytes: Buffer[]): Promise<Block['content']> {
  async function* source(): AsyncIterable<Uint8Array> {
    for (let left = sizeBytes; left > 0; left -= chunkBytes) {
      const chunk = randomBytes(Math.min(left, chunkBytes));
      bytes.push(chunk);
      yield chunk;
    }
  }
  return store.writeContent(source());
}

function newRecord(name: string, sizeBytes: number): BlobRecord {
  return {
    container,
    name,
    snapshot: '',
    etag: `"${process.pid}-${etags++}"`,
    lastModifiedMs: 0,
    sizeBytes,
    state: '',
  };
}

/** One loop's blobs: `put-<loop>-<n % 4>` replaced again and again, and one append blob. */
async function loop(index: number): Promise<void> {
  const appendName = `log-${index}`;
  const appended: Buffer[] = [];
  let appendEtag: string | undefined;
  for (let n = 0; commits < commitsMax; n++) {
    const kind = n % 3;
    const bytes: Buffer[] = kind === 2 ? appended : [];
    let change: ContentChange;
    if (kind === 0) {
      change = { kind: 'replace', blocks: [{ blockId: '', content: await write(blobs, randomSize(), bytes) }] };
    } else if (kind === 1) {
      const blocks: Block[] = [];
      for (let b = 0; b < 3; b++) {
        const block = {
          blockId: Buffer.from(`block-${b}`).toString('base64'),
          content: await write(blobs, randomSize(), bytes),
        };
        await blobs.stageBlock(account, container, `list-${index}-${n % 4}`, block);
        blocks.push(block);
      }
      change = { kind: 'replace', blocks };
    } else {
      if (appendEtag === undefined) {
        const first = newRecord(appendName, 0);
        if ((await blobs.putBlob(account, first, { kind: 'replace', blocks: [] }, null)) !== 'ok')
          throw new Error('create');
        appendEtag = first.etag;
      }
      change = { kind: 'append', block: { blockId: '', content: await write(blobs, 1 + (n % 4096), bytes) } };
    }
    if (n % 10 === 9) await write(blobs, randomSize(), []); // never committed
    const name = kind === 0 ? `put-${index}-${n % 4}` : kind === 1 ? `list-${index}-${n % 4}` : appendName;
    const whole = Buffer.concat(bytes);
    const record = newRecord(name, whole.length);
    const line = `${name} ${record.etag} ${createHash('sha256').update(whole).digest('hex')} ${whole.length}`;
    // A pipe to the parent is written synchronously on Linux: the line is out before the commit.
    process.stdout.write(`intent ${line}\n`);
    const outcome = await blobs.putBlob(account, record, change, kind === 2 ? appendEtag : undefined);
    if (outcome !== 'ok') throw new Error(`commit of ${name}: ${outcome}`);
    if (kind === 2) appendEtag = record.etag;
    commits++;
    process.stdout.write(`ack ${line}\n`);
  }
}

function randomSize(): number {
  return 1 + Math.floor(Math.random() * 300 * 1024);
}

await Promise.all(Array.from({ length: loops }, (_, index) => loop(index)));
blobs.close();
await tables.close();
