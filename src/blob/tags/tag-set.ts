// Blob index tags: a blob's set of up to 10 key-value pairs, their rules, and the two forms a request
// sends them in: Set Blob Tags' XML body and the x-ms-tags header of the writes that create a blob
// (https://learn.microsoft.com/azure/storage/blobs/storage-manage-find-blobs, set-blob-tags, put-blob).
// Pure: text in, tags out; every failure is 400 InvalidTag (or InvalidXmlDocument for a body that is
// not the Tags document).
import { StorageError } from '../../errors.js';
import { childNamed, escapeXmlText, leafText, parseXml } from '../../wire/xml.js';

/** A blob's tags: keys unique, case-sensitive, in the order the request sent them. */
export type TagSet = readonly (readonly [key: string, value: string])[];

/** storage-manage-find-blobs: "A blob can have up to 10 blob index tags". */
export const tagsPerBlobMax = 10;
/** storage-manage-find-blobs: "Tag keys must be between one and 128 characters". */
export const tagKeyLengthMax = 128;
/** storage-manage-find-blobs: "Tag values must be between zero and 256 characters". */
export const tagValueLengthMax = 256;

/** The characters of keys and values: letters, digits, space, and + - . / : = _ (storage-manage-find-blobs). */
const tagText = /^[A-Za-z0-9 +\-./:=_]*$/;

function invalidTag(detail: string): StorageError {
  return new StorageError('InvalidTag', detail);
}

/** Checks one key and value against the rules; 400 InvalidTag naming what is wrong. */
export function checkTag(key: string, value: string): void {
  if (key.length === 0 || key.length > tagKeyLengthMax) {
    throw invalidTag(`A tag key must be 1 to ${tagKeyLengthMax} characters long.`);
  }
  if (value.length > tagValueLengthMax)
    throw invalidTag(`A tag value must be at most ${tagValueLengthMax} characters.`);
  if (!tagText.test(key) || !tagText.test(value)) {
    throw invalidTag('Tag keys and values may hold only letters, digits, space and + - . / : = _');
  }
}

/** Checks a whole set: each tag, at most tagsPerBlobMax, no key twice. */
export function checkTagSet(tags: TagSet): TagSet {
  if (tags.length > tagsPerBlobMax) throw invalidTag(`A blob can have at most ${tagsPerBlobMax} tags.`);
  const keys = new Set<string>();
  for (const [key, value] of tags) {
    checkTag(key, value);
    // Chosen (unverified): a key sent twice is refused rather than one of its values kept.
    if (keys.has(key)) throw invalidTag(`The tag key '${key}' appears more than once.`);
    keys.add(key);
  }
  return tags;
}

/**
 * The x-ms-tags header: the tags in URL query-string form (`k1=v1&k2=v2`, percent-encoded), as
 * put-blob describes it. An empty header is no tags.
 */
export function parseTagsHeader(text: string): TagSet {
  if (text.trim() === '') return [];
  const tags: [string, string][] = [];
  for (const pair of text.split('&')) {
    const at = pair.indexOf('=');
    const [rawKey, rawValue] = at === -1 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    tags.push([decode(rawKey), decode(rawValue)]);
  }
  return checkTagSet(tags);
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw invalidTag('The x-ms-tags header is not percent-encoded correctly.');
  }
}

/** Set Blob Tags' body: `<Tags><TagSet><Tag><Key/><Value/></Tag>…</TagSet></Tags>`. */
export function parseTagsXml(text: string): TagSet {
  const root = parseXml(text);
  if (root.name !== 'Tags') throw new StorageError('InvalidXmlDocument', 'The root element must be Tags.');
  const set = childNamed(root, 'TagSet');
  if (set === undefined) return [];
  const tags: [string, string][] = [];
  for (const tag of set.children) {
    if (tag.name !== 'Tag') throw new StorageError('InvalidXmlDocument', 'A TagSet holds only Tag elements.');
    const key = childNamed(tag, 'Key');
    const value = childNamed(tag, 'Value');
    if (key === undefined) throw invalidTag('Every Tag has a Key.');
    tags.push([leafText(key), value === undefined ? '' : leafText(value)]);
  }
  return checkTagSet(tags);
}

/** The TagSet element's inner XML (Get Blob Tags, List Blobs' include=tags, Find Blobs by Tags). */
export function tagSetXml(tags: TagSet): string {
  const inner = tags
    .map(([key, value]) => `<Tag><Key>${escapeXmlText(key)}</Key><Value>${escapeXmlText(value)}</Value></Tag>`)
    .join('');
  return `<TagSet>${inner}</TagSet>`;
}

/** Get Blob Tags' body. */
export function writeTagsXml(tags: TagSet): string {
  return `<?xml version="1.0" encoding="utf-8"?><Tags>${tagSetXml(tags)}</Tags>`;
}

export function sameTags(a: TagSet, b: TagSet): boolean {
  return a.length === b.length && a.every(([key, value], i) => b[i]![0] === key && b[i]![1] === value);
}
