// The blob model test: seeded random sequences of stages, puts (replace, keep, append), snapshots
// and deletes with current, stale, null and absent ETags, run on the engine and on a plain model;
// every outcome, every listing, record, block list and a random range of content must agree.
// A failure names its seed; CERULEAN_BLOB_MODEL_SEED=<seed> replays exactly that sequence.
import assert from 'node:assert/strict';
import type { Block, BlobRecord, BlobStore, IfEtag, WriteOutcome } from '../../../../src/storage/blob-store.js';
import { compareListPlaces, etagOutcome, listPlace } from '../../../../src/storage/blob-rows.js';
import { seededRandom, type Random } from '../../../query/random.js';
import type { BlobCase } from '../suite.js';
import { asStored, blob, blockOf, listedNames, readAll } from '../support.js';

const seedVariable = 'CERULEAN_BLOB_MODEL_SEED';
const names = ['a', 'b', 'b/c'];
const blockIds = ['QQ==', 'Qg==', 'Qw=='];

interface Version {
  readonly record: BlobRecord;
  readonly blocks: readonly Block[];
}

class Sequence {
  private readonly bases = new Map<string, Version>();
  private readonly snapshots: Version[] = [];
  private readonly staged = new Map<string, Block[]>();
  private readonly texts = new Map<string, string>();
  private snapshotCount = 0;

  constructor(
    private readonly store: BlobStore,
    private readonly account: string,
    private readonly random: Random,
  ) {}

  async run(operations: number): Promise<void> {
    for (let i = 0; i < operations; i++) {
      const name = this.random.pick(names);
      const kind = this.random.pick(['stage', 'replace', 'replace', 'keep', 'append', 'snapshot', 'delete'] as const);
      const outcome = await this[kind](name);
      assert.equal(outcome.engine, outcome.model, `operation ${i}: ${kind} of ${name}`);
      await this.compare(i);
    }
  }

  private async block(): Promise<Block> {
    const text = 'xyzw'.slice(0, this.random.int(5)) + this.random.int(10);
    const block = await blockOf(this.store, text, this.random.pick(blockIds));
    this.texts.set(block.content.id, text);
    return block;
  }

  private text(blocks: readonly Block[]): string {
    return blocks.map((each) => this.texts.get(each.content.id)!).join('');
  }

  private ifEtag(current: string | undefined): IfEtag {
    const choice = this.random.int(10);
    if (choice < 5) return current ?? '"none"';
    return choice < 7 ? undefined : choice < 8 ? null : '"stale"';
  }

  private async stage(name: string) {
    const block = await this.block();
    const engine = await this.store.stageBlock(this.account, 'c', name, block);
    const staged = (this.staged.get(name) ?? []).filter((each) => each.blockId !== block.blockId);
    this.staged.set(name, [...staged, block]);
    return { engine, model: 'ok' as WriteOutcome };
  }

  private async replace(name: string) {
    const staged = this.staged.get(name) ?? [];
    const blocks = [
      ...staged.filter(() => this.random.chance(0.7)),
      ...(this.random.chance(0.5) ? [await this.block()] : []),
    ];
    return this.put(name, blocks, { kind: 'replace', blocks });
  }

  private async keep(name: string) {
    const blocks = this.bases.get(name)?.blocks ?? [];
    return this.put(name, blocks, { kind: 'keep' });
  }

  private async append(name: string) {
    const block = await this.block();
    return this.put(name, [...(this.bases.get(name)?.blocks ?? []), block], { kind: 'append', block });
  }

  private async put(name: string, blocks: readonly Block[], change: Parameters<BlobStore['putBlob']>[2]) {
    const current = this.bases.get(name);
    const ifEtag = this.ifEtag(current?.record.etag);
    const record = blob('c', name, this.text(blocks).length, `state ${this.random.int(100)}`);
    const engine = await this.store.putBlob(this.account, record, change, ifEtag);
    let model = etagOutcome(current?.record.etag, ifEtag);
    if (model === 'ok' && current === undefined && change.kind !== 'replace') model = 'blobNotFound';
    if (model === 'ok') {
      this.bases.set(name, { record, blocks });
      if (change.kind === 'replace') this.staged.delete(name);
    }
    return { engine, model };
  }

  private async snapshot(name: string) {
    const base = this.bases.get(name);
    const ifEtag = this.random.chance(0.8) ? (base?.record.etag ?? '"none"') : '"stale"';
    const record = { ...blob('c', name, base?.record.sizeBytes ?? 0), snapshot: `s${this.snapshotCount++}` };
    const engine = await this.store.snapshotBlob(this.account, record, ifEtag);
    const model = etagOutcome(base?.record.etag, ifEtag);
    if (model === 'ok') this.snapshots.push({ record, blocks: base!.blocks });
    return { engine, model };
  }

  private async delete(name: string) {
    const ofName = this.snapshots.filter((each) => each.record.name === name);
    const target = this.random.chance(0.3) && ofName.length > 0 ? this.random.pick(ofName) : this.bases.get(name);
    const key = { container: 'c', name, snapshot: target?.record.snapshot ?? '' };
    const parts = { base: this.random.chance(0.7), snapshots: this.random.chance(0.5) };
    const ifEtag = this.ifEtag(target?.record.etag);
    const engine = await this.store.deleteBlob(this.account, key, parts, ifEtag);
    if (target === undefined) {
      // No record: with ifEtag null, `base` drops the name's staged blocks, if it has any.
      const stagedOnly = parts.base && ifEtag === null && (this.staged.get(name)?.length ?? 0) > 0;
      if (stagedOnly) this.staged.delete(name);
      return { engine, model: stagedOnly ? 'ok' : 'blobNotFound' };
    }
    const model = etagOutcome(target.record.etag, ifEtag);
    if (model !== 'ok') return { engine, model };
    const gone = (each: Version) =>
      key.snapshot !== '' ? each === target : each.record.name === name && parts.snapshots;
    this.snapshots.splice(0, this.snapshots.length, ...this.snapshots.filter((each) => !gone(each)));
    if (key.snapshot === '' && parts.base) {
      this.bases.delete(name);
      this.staged.delete(name);
    }
    return { engine, model };
  }

  private async compare(step: number): Promise<void> {
    const versions = [...this.bases.values(), ...this.snapshots];
    const places = (version: Version) => listPlace(version.record.name, version.record.snapshot);
    versions.sort((x, y) => compareListPlaces(places(x), places(y)));
    const uncommitted = [...this.staged.keys()].filter((name) => !this.bases.has(name));
    const expected = [...versions.map((each) => ({ kind: 'blob' as const, record: each.record }))];
    for (const name of uncommitted) expected.push({ kind: 'uncommitted', name } as never);
    expected.sort((x, y) => compareListPlaces(placeOf(x), placeOf(y)));
    const options = { prefix: '', limit: 100, snapshots: true, uncommitted: true };
    const listed = await this.store.listBlobs(this.account, 'c', options);
    assert.deepEqual(listedNames(listed), listedNames(expected), `after operation ${step}: the listing`);
    assert.deepEqual(listed, expected, `after operation ${step}: the records`);
    if (versions.length === 0) return;
    const version = this.random.pick(versions);
    const text = this.text(version.blocks);
    const start = this.random.int(text.length + 2);
    const end = start + this.random.int(text.length + 2);
    assert.equal(await readAll(this.store, this.account, version.record, start, end), text.slice(start, end));
    const key = { container: 'c', name: version.record.name, snapshot: version.record.snapshot };
    const blocks = await this.store.getBlocks(this.account, key);
    assert.deepEqual(blocks.committed, asStored(version.blocks), `after operation ${step}: the committed blocks`);
    const staged = version.record.snapshot === '' ? (this.staged.get(version.record.name) ?? []) : [];
    assert.deepEqual(blocks.staged, asStored(staged), `after operation ${step}: the staged blocks`);
  }
}

function placeOf(entry: { kind: 'blob'; record: BlobRecord } | { kind: 'uncommitted'; name: string }) {
  return entry.kind === 'blob' ? listPlace(entry.record.name, entry.record.snapshot) : listPlace(entry.name, '');
}

export const modelCases: readonly BlobCase[] = [
  {
    name: 'random sequences of writes agree with a model',
    async run({ store, account }) {
      const replay = process.env[seedVariable];
      const base = replay !== undefined ? Number(replay) >>> 0 : Math.floor(Math.random() * 2 ** 32);
      for (let i = 0; i < (replay !== undefined ? 1 : 8); i++) {
        const seed = (base + i) >>> 0;
        const acct = account();
        await store.createContainer(acct, { name: 'c', etag: '"c"', lastModifiedMs: 0, state: '' });
        try {
          await new Sequence(store, acct, seededRandom(seed)).run(60);
        } catch (error) {
          throw new Error(`seed ${seed} (${seedVariable}=${seed}): ${(error as Error).message}`, { cause: error });
        }
      }
    },
  },
];
