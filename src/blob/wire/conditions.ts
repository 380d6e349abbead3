// Conditional headers on blob and container operations: If-Match, If-None-Match (`*` included),
// If-Modified-Since, If-Unmodified-Since, and Copy Blob's x-ms-source-if-* twins
// (https://learn.microsoft.com/rest/api/storageservices/specifying-conditional-headers-for-blob-service-operations).
// Pure: the operations read the record, evaluate, then write by compare-and-swap on the ETag they
// read, so the check and the write are one atomic step.
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { Headers } from '../../http/service-definition.js';
import { visibleEtag } from './etag.js';
import {
  matches as tagsMatch,
  parseTagCondition,
  tagMap,
  TagExpressionError,
  type TagExpression,
} from '../tags/expression.js';
import type { TagSet } from '../tags/tag-set.js';

export interface Conditions {
  readonly ifMatch: readonly string[] | undefined;
  readonly ifNoneMatch: readonly string[] | undefined;
  readonly ifModifiedSinceMs: number | undefined;
  readonly ifUnmodifiedSinceMs: number | undefined;
  /** x-ms-if-tags (x-ms-source-if-tags): an expression the blob's tags must satisfy. */
  readonly ifTags: TagExpression | undefined;
}

/** What a condition is evaluated against: the current version, or undefined when there is none. */
export interface Versioned {
  readonly etag: string;
  readonly lastModifiedMs: number;
  /** A blob's index tags, for x-ms-if-tags; undefined for what has none (a container). */
  readonly tags?: TagSet | undefined;
}

/** The conditions of a request; `prefix` 'x-ms-source-' reads Copy Blob's conditions on its source. */
export function parseConditions(headers: Headers, prefix = ''): Conditions {
  return {
    ifMatch: etagList(headers[`${prefix}if-match`]),
    ifNoneMatch: etagList(headers[`${prefix}if-none-match`]),
    ifModifiedSinceMs: dateHeader(headers[`${prefix}if-modified-since`]),
    ifUnmodifiedSinceMs: dateHeader(headers[`${prefix}if-unmodified-since`]),
    ifTags: tagCondition(prefix === '' ? 'x-ms-if-tags' : `${prefix}if-tags`, headers),
  };
}

/** A tag condition that does not parse is 400 InvalidHeaderValue (unverified: the service's code). */
function tagCondition(name: string, headers: Headers): TagExpression | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  try {
    return parseTagCondition(text);
  } catch (error) {
    if (error instanceof TagExpressionError) throw invalidHeaderValue(name, text);
    throw error;
  }
}

/**
 * Container operations have no tags to test: x-ms-if-tags there is 400 UnsupportedHeader rather than
 * ignored (chosen; the conditional-headers page lists it for blob operations only).
 */
export function refuseTagConditions(conditions: Conditions): void {
  if (conditions.ifTags !== undefined) {
    throw new StorageError('UnsupportedHeader', 'x-ms-if-tags applies to blob operations only.');
  }
}

export function hasConditions(conditions: Conditions): boolean {
  return Object.values(conditions).some((value) => value !== undefined);
}

function etagList(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  const tags = text
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
  return tags.length === 0 ? undefined : tags;
}

/** An HTTP date; one that does not parse is ignored, as HTTP asks (RFC 9110 §13.1.3). */
function dateHeader(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** ETags compare as the service compares them: the quoted text, or the same text unquoted. */
function matches(tags: readonly string[], etag: string): boolean {
  const bare = etag.replace(/^"|"$/g, '');
  return tags.some((tag) => tag === '*' || tag === etag || tag === bare || tag.replace(/^W\//, '') === etag);
}

/** Last-Modified is compared at whole seconds, the precision of an HTTP date. */
function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

export type Verdict = 'ok' | 'notModified' | 'failed';

/**
 * Evaluates the conditions (RFC 9110 §13.2.2 order: If-Match, else If-Unmodified-Since; then
 * If-None-Match, else If-Modified-Since). `failed` is 412 for every operation; `notModified` is
 * 304 for GET and HEAD and 412 for the others (`evaluateForWrite`). With no current version,
 * If-Match and If-Unmodified-Since fail and the others hold.
 */
export function evaluate(conditions: Conditions, current: Versioned | undefined): Verdict {
  const verdict = evaluateDates(conditions, current);
  if (verdict === 'failed' || conditions.ifTags === undefined) return verdict;
  // x-ms-if-tags: a blob whose tags do not satisfy it (or no blob at all) fails, 412 even for GET.
  return current !== undefined && tagsMatch(conditions.ifTags, tagMap(current.tags ?? [])) ? verdict : 'failed';
}

function evaluateDates(conditions: Conditions, current: Versioned | undefined): Verdict {
  const { ifMatch, ifNoneMatch, ifModifiedSinceMs, ifUnmodifiedSinceMs } = conditions;
  if (current === undefined) return ifMatch !== undefined || ifUnmodifiedSinceMs !== undefined ? 'failed' : 'ok';
  if (ifMatch !== undefined) {
    if (!matches(ifMatch, visibleEtag(current.etag))) return 'failed';
  } else if (ifUnmodifiedSinceMs !== undefined && seconds(current.lastModifiedMs) > seconds(ifUnmodifiedSinceMs)) {
    return 'failed';
  }
  if (ifNoneMatch !== undefined) {
    if (matches(ifNoneMatch, visibleEtag(current.etag))) return 'notModified';
  } else if (ifModifiedSinceMs !== undefined && seconds(current.lastModifiedMs) <= seconds(ifModifiedSinceMs)) {
    return 'notModified';
  }
  return 'ok';
}

/** For a write: any failed condition is 412 ConditionNotMet (exported for container operations too). */
export function checkWriteConditions(conditions: Conditions, current: Versioned | undefined): void {
  if (evaluate(conditions, current) !== 'ok') throw new StorageError('ConditionNotMet');
}

/** For Copy Blob's conditions on its source: 412 SourceConditionNotMet. */
export function checkSourceConditions(conditions: Conditions, current: Versioned): void {
  if (evaluate(conditions, current) !== 'ok') throw new StorageError('SourceConditionNotMet');
}
