// The path store's contract (src/storage/path-store.ts), proven on every engine: renames of a file
// and of a directory tree over the blob store's rows (records, snapshots, staged blocks, content
// kept by reference), deletes of a whole tree, their outcomes, a replace that keeps the staged
// blocks (a flush with retainUncommittedData), and a model-based run of random create, append,
// flush, rename, delete and tree delete sequences compared, after every step, with an in-memory
// model of the names and their bytes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BlobRecord, BlobStore, Block } from '../../../src/storage/blob-store.js';
import type { PathStore } from '../../../src/storage/path-store.js';
import { seededRandom } from '../../../src/domain/random.js';

export interface PathStoresUnderTest {
  readonly blobs: BlobStore;
  readonly paths: PathStore;
  close(): Promise<void>;
}

const account = 'devstoreaccount1';
const t0 = Date.UTC(2026, 0, 1);
let sequence = 0;
const etag = () => `"0x${(++sequence).toString(16).padStart(15, '0')}"`;

function record(container: string, name: string, sizeBytes: number, snapshot = ''): BlobRecord {
  return { container, name, snapshot, etag: etag(), lastModifiedMs: t0, sizeBytes, state: '{}' };
}

async function* once(bytes: string): AsyncGenerator<Uint8Array> {
  yield Buffer.from(bytes);
}

async function block(blobs: BlobStore, bytes: string, blockId = ''): Promise<Block> {
  return { blockId, content: await blobs.writeContent(once(bytes)) };
}

async function textOf(blobs: BlobStore, container: string, name: string): Promise<string | undefined> {
  const found = await blobs.getBlob(account, { container, name, snapshot: '' });
  if (found === undefined) return undefined;
  const stream = await blobs.readContent(account, found, found.etag, 0, found.sizeBytes);
  assert.notEqual(stream, 'changed');
  const parts: Buffer[] = [];
  for await (const part of stream as AsyncIterable<Buffer>) parts.push(part);
  return Buffer.concat(parts).toString();
}

async function put(blobs: BlobStore, container: string, name: string, bytes: string): Promise<BlobRecord> {
  const next = record(container, name, bytes.length);
  const blocks = bytes === '' ? [] : [await block(blobs, bytes)];
  assert.equal(await blobs.putBlob(account, next, { kind: 'replace', blocks }, undefined), 'ok');
  return next;
}

async function names(blobs: BlobStore, container: string): Promise<string[]> {
  const listed = await blobs.listBlobs(account, container, {
    prefix: '',
    limit: 100_000,
    snapshots: false,
    uncommitted: false,
  });
  return listed.map((entry) => (entry.kind === 'blob' ? entry.record.name : `(staged) ${entry.name}`));
}

export function runPathConformance(label: string, open: () => Promise<PathStoresUnderTest>): void {
  describe(`path store conformance: ${label}`, () => {
    let stores: PathStoresUnderTest;
    let container: string;
    before(async () => {
      stores = await open();
    });
    after(async () => {
      await stores?.close();
    });

    async function newContainer(): Promise<string> {
      const name = `p${++sequence}`;
      const made = await stores.blobs.createContainer(account, { name, etag: etag(), lastModifiedMs: t0, state: '{}' });
      assert.equal(made, true);
      return name;
    }

    test('a file takes its new name with its content, ETag and staged blocks; the old name is free', async () => {
      container = await newContainer();
      const { blobs, paths } = stores;
      const file = await put(blobs, container, 'a/f', 'hello');
      await blobs.stageBlock(account, container, 'a/f', await block(blobs, ' world', 'YQ=='));
      assert.equal(await paths.renamePath(account, container, 'a/f', 'b/g', file.etag), 'ok');
      assert.equal(await textOf(blobs, container, 'a/f'), undefined);
      assert.equal(await textOf(blobs, container, 'b/g'), 'hello');
      assert.equal((await blobs.getBlob(account, { container, name: 'b/g', snapshot: '' }))?.etag, file.etag);
      const { staged } = await blobs.getBlocks(account, { container, name: 'b/g', snapshot: '' });
      assert.deepEqual(
        staged.map((b) => b.blockId),
        ['YQ=='],
      );
      assert.deepEqual((await blobs.getBlocks(account, { container, name: 'a/f', snapshot: '' })).staged, []);
    });

    test('a directory moves with everything under it, snapshots too; names that only share its prefix stay', async () => {
      await directoryCase(stores.blobs, stores.paths, await newContainer());
    });

    test('index tags move with their blobs: Find Blobs by Tags names the new paths', async () => {
      await tagsCase(stores.blobs, stores.paths, await newContainer());
    });

    test('outcomes: source missing or changed, destination taken (itself or under it), container missing', async () => {
      await outcomesCase(stores.blobs, stores.paths, await newContainer());
    });

    test('a tree is deleted whole (snapshots, staged blocks, tags); names that only share its prefix stay', async () => {
      await deleteTreeCase(stores.blobs, stores.paths, await newContainer());
    });

    test('a replace with keepStaged commits its blocks and keeps every staged block of the name', async () => {
      await keepStagedCase(stores.blobs, await newContainer());
    });

    test('model: 300 random creates, appends, flushes, renames and deletes agree with an in-memory model', async () => {
      await modelRun(stores.blobs, stores.paths, await newContainer());
    });
  });
}

/** The model-based run: every step's names, then the bytes and staged blocks, compared with a map. */
async function modelRun(blobs: BlobStore, paths: PathStore, container: string): Promise<void> {
  const next = seededRandom(20261206);
  const model = new Map<string, { committed: string; staged: string[] }>();
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const segment = () => pick(['a', 'b', 'c', 'a-b', 'a0']);
  const freshName = () => Array.from({ length: 1 + Math.floor(next() * 3) }, segment).join('/');
  const current = (name: string) => blobs.getBlob(account, { container, name, snapshot: '' });
  for (let step = 0; step < 300; step++) {
    const existing = [...model.keys()].sort();
    const action = existing.length === 0 ? 0 : Math.floor(next() * 6);
    // 0 create, 1 append, 2 flush, 3 rename, 4 delete, 5 tree delete.
    if (action === 0) {
      const name = freshName();
      await put(blobs, container, name, `${step}`);
      model.set(name, { committed: `${step}`, staged: [] });
    } else if (action === 1) {
      const name = pick(existing);
      const text = `+${step}`;
      const entry = model.get(name)!;
      await blobs.stageBlock(
        account,
        container,
        name,
        await block(blobs, text, Buffer.from(`s${step}`).toString('base64')),
      );
      entry.staged.push(text);
    } else if (action === 2) {
      const name = pick(existing);
      const found = (await current(name))!;
      const { committed, staged } = await blobs.getBlocks(account, { container, name, snapshot: '' });
      const entry = model.get(name)!;
      const flushed = `${entry.committed}${entry.staged.join('')}`;
      const next = { ...found, etag: etag(), sizeBytes: flushed.length };
      const blocks = [...committed, ...staged];
      assert.equal(await blobs.putBlob(account, next, { kind: 'replace', blocks }, found.etag), 'ok');
      model.set(name, { committed: flushed, staged: [] });
    } else if (action === 3) {
      const source = pick(existing);
      const destination = freshName();
      const found = (await current(source))!;
      const outcome = await (destination === source || destination.startsWith(`${source}/`)
        ? Promise.resolve('skipped')
        : paths.renamePath(account, container, source, destination, found.etag));
      const moving = existing.filter((name) => name === source || name.startsWith(`${source}/`));
      const taken = existing.some((name) => name === destination || name.startsWith(`${destination}/`));
      if (outcome === 'skipped') continue;
      assert.equal(outcome, taken ? 'destinationExists' : 'ok', `step ${step}: ${source} → ${destination}`);
      if (taken) continue;
      const moved = moving.map((name) => [name, model.get(name)!] as const);
      for (const [name] of moved) model.delete(name);
      for (const [name, entry] of moved) model.set(`${destination}${name.slice(source.length)}`, entry);
    } else {
      const name = pick(existing);
      const whole = { base: true, snapshots: true };
      const outcome = await (action === 4
        ? blobs.deleteBlob(account, { container, name, snapshot: '' }, whole, undefined)
        : paths.deleteTree(account, container, name, (await current(name))!.etag));
      assert.equal(outcome, 'ok', name);
      const tree = existing.filter((other) => other === name || (action === 5 && other.startsWith(`${name}/`)));
      for (const gone of tree) model.delete(gone);
    }
    assert.deepEqual(await names(blobs, container), [...model.keys()].sort(), `names after step ${step}`);
  }
  for (const [name, entry] of model) {
    assert.equal(await textOf(blobs, container, name), entry.committed, name);
    const { staged } = await blobs.getBlocks(account, { container, name, snapshot: '' });
    assert.equal(staged.length, entry.staged.length, `${name}'s staged blocks`);
  }
}

/** A directory with contents, snapshots and neighbours that share its prefix. */
async function directoryCase(blobs: BlobStore, paths: PathStore, container: string): Promise<void> {
  const dir = await put(blobs, container, 'd', '');
  for (const name of ['d/1', 'd/sub/2', 'd/sub/deep/3', 'd-x', 'd0', 'dd/4', 'e'])
    await put(blobs, container, name, name);
  const snap = await blobs.getBlob(account, { container, name: 'd/1', snapshot: '' });
  const snapshot = { ...snap!, snapshot: '2026-01-01T00:00:00.0000000Z', etag: etag() };
  assert.equal(await blobs.snapshotBlob(account, snapshot, snap!.etag), 'ok');
  assert.equal(await paths.renamePath(account, container, 'd', 'x/y', dir.etag), 'ok');
  assert.deepEqual(await names(blobs, container), [
    'd-x',
    'd0',
    'dd/4',
    'e',
    'x/y',
    'x/y/1',
    'x/y/sub/2',
    'x/y/sub/deep/3',
  ]);
  assert.equal(await textOf(blobs, container, 'x/y/sub/deep/3'), 'd/sub/deep/3');
  const listed = await blobs.listBlobs(account, container, {
    prefix: 'x/y/1',
    limit: 10,
    snapshots: true,
    uncommitted: false,
  });
  assert.equal(listed.length, 2, 'the snapshot moved with its base blob');
}

/** Each outcome but 'ok', and nothing renamed by them. */
async function outcomesCase(blobs: BlobStore, paths: PathStore, container: string): Promise<void> {
  const file = await put(blobs, container, 'f', 'f');
  await put(blobs, container, 'taken', 't');
  await put(blobs, container, 'dir/child', 'c');
  assert.equal(await paths.renamePath(account, container, 'nothing', 'g', file.etag), 'sourceNotFound');
  assert.equal(await paths.renamePath(account, container, 'f', 'g', '"0x0"'), 'etagMismatch');
  assert.equal(await paths.renamePath(account, container, 'f', 'taken', file.etag), 'destinationExists');
  assert.equal(await paths.renamePath(account, container, 'f', 'dir', file.etag), 'destinationExists');
  assert.equal(await paths.renamePath(account, 'no-such', 'f', 'g', file.etag), 'containerNotFound');
  assert.deepEqual(await names(blobs, container), ['dir/child', 'f', 'taken']);
}

/** A tree with snapshots, staged blocks and tags goes whole; its neighbours stay; refused deletes delete nothing. */
async function deleteTreeCase(blobs: BlobStore, paths: PathStore, container: string): Promise<void> {
  const dir = await put(blobs, container, 'd', '');
  for (const name of ['d/1', 'd/sub/2', 'd-x', 'd0', 'dd/4']) await put(blobs, container, name, name);
  const tagged = { ...record(container, 'd/sub/t', 0), indexTags: [['kind', 'gone']] as const };
  assert.equal(await blobs.putBlob(account, tagged, { kind: 'replace', blocks: [] }, undefined), 'ok');
  const snap = (await blobs.getBlob(account, { container, name: 'd/1', snapshot: '' }))!;
  const snapshot = { ...snap, snapshot: '2026-01-01T00:00:00.0000000Z', etag: etag() };
  assert.equal(await blobs.snapshotBlob(account, snapshot, snap.etag), 'ok');
  await blobs.stageBlock(account, container, 'd/staged-only', await block(blobs, 's', 'cw=='));
  await blobs.stageBlock(account, container, 'd0', await block(blobs, 's', 'cw=='));
  assert.equal(await paths.deleteTree(account, container, 'nothing', dir.etag), 'pathNotFound');
  assert.equal(await paths.deleteTree(account, container, 'd', '"0x0"'), 'etagMismatch');
  assert.equal(await paths.deleteTree(account, 'no-such', 'd', dir.etag), 'containerNotFound');
  assert.equal((await names(blobs, container)).length, 7, 'nothing deleted by a refused delete');
  assert.equal(await paths.deleteTree(account, container, 'd', dir.etag), 'ok');
  assert.deepEqual(await names(blobs, container), ['d-x', 'd0', 'dd/4']);
  const listed = await blobs.listBlobs(account, container, {
    prefix: 'd',
    limit: 10,
    snapshots: true,
    uncommitted: true,
  });
  const listedNames = listed.map((entry) => (entry.kind === 'blob' ? entry.record.name : entry.name));
  assert.deepEqual(listedNames, ['d-x', 'd0', 'dd/4'], 'no snapshot nor staged-only name is left under d/');
  assert.equal((await blobs.getBlocks(account, { container, name: 'd0', snapshot: '' })).staged.length, 1);
  const bound = { value: 'gone', inclusive: true };
  const query = { container, key: 'kind', lower: bound, upper: bound, after: undefined, limit: 10 };
  assert.deepEqual(await blobs.findBlobsByTags(account, query), [], 'the tags went with their blob');
}

/** A flush with retainUncommittedData: the staged blocks stay, committed ones too, until a plain replace. */
async function keepStagedCase(blobs: BlobStore, name: string): Promise<void> {
  const file = await put(blobs, name, 'f', '');
  const first = await block(blobs, 'abc', 'MQ==');
  const second = await block(blobs, 'def', 'Mg==');
  await blobs.stageBlock(account, name, 'f', first);
  await blobs.stageBlock(account, name, 'f', second);
  const next = { ...file, etag: etag(), sizeBytes: 3 };
  const change = { kind: 'replace', blocks: [first], keepStaged: true } as const;
  assert.equal(await blobs.putBlob(account, next, change, file.etag), 'ok');
  assert.equal(await textOf(blobs, name, 'f'), 'abc');
  const key = { container: name, name: 'f', snapshot: '' };
  const kept = (await blobs.getBlocks(account, key)).staged.map((staged) => staged.blockId);
  assert.deepEqual(kept, ['MQ==', 'Mg==']);
  const last = { ...next, etag: etag(), sizeBytes: 6 };
  assert.equal(await blobs.putBlob(account, last, { kind: 'replace', blocks: [first, second] }, next.etag), 'ok');
  assert.equal(await textOf(blobs, name, 'f'), 'abcdef');
  assert.deepEqual((await blobs.getBlocks(account, key)).staged, []);
}

/** Index tags of blobs under a renamed directory name the new paths. */
async function tagsCase(blobs: BlobStore, paths: PathStore, name: string): Promise<void> {
  const tagged = { ...record(name, 'd/x', 0), indexTags: [['stage', 'done']] as const };
  assert.equal(await blobs.putBlob(account, tagged, { kind: 'replace', blocks: [] }, undefined), 'ok');
  const directory = await put(blobs, name, 'd', '');
  assert.equal(await paths.renamePath(account, name, 'd', 'e', directory.etag), 'ok');
  const bound = { value: 'done', inclusive: true };
  const query = { container: name, key: 'stage', lower: bound, upper: bound, after: undefined, limit: 10 };
  const found = await blobs.findBlobsByTags(account, query);
  assert.deepEqual(
    found.map((blob) => blob.name),
    ['e/x'],
  );
}
