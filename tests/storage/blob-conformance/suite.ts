// The Blob store conformance suite: one function that takes a factory for an engine's BlobStore
// (src/storage/blob-store.ts) and registers every case of the contract against it, like the queue
// store's suite (tests/storage/queue-conformance/suite.ts). An engine that cannot run a case passes
// a skip entry with its written reason; a skip naming no case is an error.
//
// Each group gets a fresh store; each case works in accounts of its own.
import assert from 'node:assert/strict';
import type { BlobStore } from '../../../src/storage/blob-store.js';
import { blobCases } from './cases/blobs.js';
import { blockCases } from './cases/blocks.js';
import { containerDeleteCases } from './cases/container-delete.js';
import { containerSoftDeleteCases } from './cases/container-soft-delete.js';
import { containerCases } from './cases/containers.js';
import { contentCases } from './cases/content.js';
import { durabilityCases } from './cases/durability.js';
import { listCases } from './cases/listing.js';
import { modelCases } from './cases/model.js';
import { pageCases } from './cases/pages.js';
import { reclaimCases } from './cases/reclaim.js';
import { versionCases } from './cases/versions.js';
import { tagCases } from './cases/tags.js';
import { softDeleteCases } from './cases/soft-delete.js';
import { runConformanceGroups, type ConformanceCase } from '../conformance-groups.js';
import type { BlobStoreFactory, BlobStoreUnderTest } from './support.js';

export interface BlobCaseContext {
  readonly store: BlobStore;
  readonly subject: BlobStoreUnderTest;
  /** A fresh account name. */
  account(): string;
  /** Creates container 'c' in a fresh account; the account. */
  withContainer(): Promise<string>;
  /** Closes the store and opens the same data again; throws if the engine cannot. */
  reopen(): Promise<BlobStore>;
}

export type BlobCase = ConformanceCase<BlobCaseContext>;

const groups: readonly { readonly name: string; readonly cases: readonly BlobCase[] }[] = [
  { name: 'containers', cases: containerCases },
  { name: 'blobs', cases: blobCases },
  { name: 'listing', cases: listCases },
  { name: 'blocks', cases: blockCases },
  { name: 'content', cases: contentCases },
  { name: 'reclaim', cases: reclaimCases },
  { name: 'container delete', cases: containerDeleteCases },
  { name: 'index tags', cases: tagCases },
  { name: 'model', cases: modelCases },
  { name: 'pages', cases: pageCases },
  { name: 'durability across reopen', cases: durabilityCases },
  { name: 'versions', cases: versionCases },
  { name: 'soft delete', cases: softDeleteCases },
  { name: 'container soft delete', cases: containerSoftDeleteCases },
];

export interface BlobConformanceOptions {
  /** Case name → the written reason this engine does not run it. */
  readonly skip?: Readonly<Record<string, string>>;
}

export function runBlobConformance(
  engine: string,
  factory: BlobStoreFactory,
  options: BlobConformanceOptions = {},
): void {
  runConformanceGroups(`BlobStore conformance: ${engine}`, groups, factory, caseContext, options.skip);
}

let accounts = 0;

function caseContext(subject: BlobStoreUnderTest): BlobCaseContext {
  let store = subject.store;
  const context: BlobCaseContext = {
    get store() {
      return store;
    },
    subject,
    account: () => `acct${accounts++}`,
    async withContainer() {
      const account = context.account();
      assert.ok(await store.createContainer(account, { name: 'c', etag: '"c0"', lastModifiedMs: 0, state: '' }));
      return account;
    },
    async reopen() {
      assert.ok(subject.reopen !== undefined, 'this engine keeps nothing across a reopen');
      store = await subject.reopen();
      return store;
    },
  };
  return context;
}
