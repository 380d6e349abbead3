// Block ids and block list resolution (https://learn.microsoft.com/rest/api/storageservices/put-block,
// put-block-list). Pure: the operations fetch the blocks and store the result.
import { StorageError } from '../../errors.js';
import type { Block } from '../../storage/blob-store.js';
import { blockIdBytesMax, committedBlocksMax } from '../limits.js';
import type { BlockListEntry } from '../wire/block-list-xml.js';

/**
 * A block id: base64 text decoding to at most 64 bytes (400 InvalidBlockId otherwise, our reading
 * of put-block; the service answers some such ids with InvalidQueryParameterValue). A blob's block
 * ids are all of one length (put-block), which the service enforces among its staged (uncommitted)
 * blocks only: an id whose length differs from a staged block's (`otherBlockId`) is 400
 * InvalidBlobOrBlock, and once none is staged, ids of a new length are taken.
 */
export function checkBlockId(blockId: string, otherBlockId: string | undefined): void {
  const bytes = decodedLength(blockId);
  if (bytes === undefined || bytes === 0 || bytes > blockIdBytesMax) {
    throw new StorageError('InvalidBlockId', `The block id '${blockId}' is not base64 of 1 to 64 bytes.`);
  }
  // '' names content not put as a block (Put Blob): it constrains nothing.
  if (otherBlockId !== undefined && otherBlockId !== '' && decodedLength(otherBlockId) !== bytes) {
    throw new StorageError('InvalidBlobOrBlock', 'All block ids of a blob must have the same length.');
  }
}

function decodedLength(blockId: string): number | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(blockId) || blockId.length % 4 !== 0) return undefined;
  return Buffer.from(blockId, 'base64').length;
}

/**
 * The committed block list Put Block List names: Committed from the blob's committed blocks,
 * Uncommitted from the staged ones, Latest the staged one if any else the committed one. A block
 * not found is 400 InvalidBlockList; more than 50,000 is 400 BlockListTooLong.
 */
export function resolveBlockList(
  entries: readonly BlockListEntry[],
  committed: readonly Block[],
  staged: readonly Block[],
): Block[] {
  if (entries.length > committedBlocksMax) throw new StorageError('BlockListTooLong');
  const committedById = new Map(committed.filter((b) => b.blockId !== '').map((b) => [b.blockId, b]));
  const stagedById = new Map(staged.map((b) => [b.blockId, b]));
  return entries.map((entry) => {
    const block =
      entry.kind === 'Committed'
        ? committedById.get(entry.blockId)
        : entry.kind === 'Uncommitted'
          ? stagedById.get(entry.blockId)
          : (stagedById.get(entry.blockId) ?? committedById.get(entry.blockId));
    if (block === undefined) {
      throw new StorageError('InvalidBlockList', `The block '${entry.blockId}' (${entry.kind}) is not there.`);
    }
    return block;
  });
}

export function totalSize(blocks: readonly Block[]): number {
  return blocks.reduce((sum, block) => sum + block.content.sizeBytes, 0);
}
