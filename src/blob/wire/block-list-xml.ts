// Put Block List's request body and Get Block List's response body
// (https://learn.microsoft.com/rest/api/storageservices/put-block-list, get-block-list). The
// request may name 50,000 blocks, more elements than the general XML reader allows, so it has its
// own strict reader for this one flat shape: anything else is 400 InvalidXmlDocument.
import { StorageError } from '../../errors.js';
import { escapeXmlText } from '../../wire/xml.js';

export type BlockListKind = 'Committed' | 'Uncommitted' | 'Latest';

export interface BlockListEntry {
  readonly kind: BlockListKind;
  /** The block id as sent (base64 text). */
  readonly blockId: string;
}

const declaration = /^\uFEFF?\s*(?:<\?xml[^?]*\?>)?\s*/;
const entry = /\s*<(Committed|Uncommitted|Latest)>([^<]*)<\/\1>|\s*<(Committed|Uncommitted|Latest)\s*\/>/y;
const predefined: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };

function invalid(detail: string): StorageError {
  return new StorageError('InvalidXmlDocument', detail);
}

/** The entries of a `<BlockList>` body in order. */
export function parseBlockList(text: string): BlockListEntry[] {
  let at = declaration.exec(text)![0].length;
  const open = /<BlockList\s*>/y;
  open.lastIndex = at;
  if (open.exec(text) === null) {
    if (/<BlockList\s*\/>\s*$/y.test(text.slice(at))) return [];
    throw invalid('The root element must be BlockList.');
  }
  at = open.lastIndex;
  const entries: BlockListEntry[] = [];
  for (;;) {
    entry.lastIndex = at;
    const match = entry.exec(text);
    if (match === null) break;
    at = entry.lastIndex;
    entries.push({ kind: (match[1] ?? match[3]) as BlockListKind, blockId: unescape(match[2] ?? '') });
  }
  if (!/^\s*<\/BlockList>\s*$/.test(text.slice(at))) {
    throw invalid(`The BlockList holds something other than Committed, Uncommitted or Latest at offset ${at}.`);
  }
  return entries;
}

function unescape(text: string): string {
  return text.trim().replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);/g, (whole, name: string) => {
    if (name.startsWith('#x')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10));
    const value = predefined[name];
    if (value === undefined) throw invalid(`The entity ${whole} is not defined.`);
    return value;
  });
}

export interface ListedBlock {
  readonly blockId: string;
  readonly sizeBytes: number;
}

/** Get Block List's body; a list left out (blocklisttype) is written as absent, an empty one as `<… />`. */
export function writeBlockList(
  committed: readonly ListedBlock[] | undefined,
  uncommitted: readonly ListedBlock[] | undefined,
): string {
  const blocks = (name: string, list: readonly ListedBlock[] | undefined): string => {
    if (list === undefined) return '';
    if (list.length === 0) return `<${name} />`;
    const items = list.map(
      (block) => `<Block><Name>${escapeXmlText(block.blockId)}</Name><Size>${block.sizeBytes}</Size></Block>`,
    );
    return `<${name}>${items.join('')}</${name}>`;
  };
  return (
    '<?xml version="1.0" encoding="utf-8"?><BlockList>' +
    blocks('CommittedBlocks', committed) +
    blocks('UncommittedBlocks', uncommitted) +
    '</BlockList>'
  );
}
