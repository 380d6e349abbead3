// The answer to a Blob service request no route matches: a method the resource does not have, a
// feature Cerulean does not serve, or a request the service would not recognise.
import { invalidQueryParameter, StorageError } from '../errors.js';
import type { BlobResource } from './resources.js';

/**
 * `comp` values of features the service has and Cerulean does not serve: incremental copy, query
 * acceleration, immutability and legal holds, expiry, container rename and restore, soft delete.
 */
const featuresNotServed: ReadonlyMap<string, string> = new Map([
  ['incrementalcopy', 'incremental copy'],
  ['query', 'query acceleration'],
  ['immutabilitypolicies', 'immutability policies'],
  ['legalhold', 'legal holds'],
  ['expiry', 'blob expiry'],
  ['rename', 'container rename'],
]);

/**
 * A method the resource has not: 405 UnsupportedHttpVerb. A feature Cerulean does not serve: 400
 * UnsupportedQueryParameter naming it (chosen: the service serves these, so it has no code for
 * this; a 400 tells clients not to retry). A container path without restype=container: 400
 * InvalidUri (the service reads it as a blob of `$root`; chosen, unverified). Anything else (an
 * unknown comp or restype): 400 InvalidQueryParameterValue (unverified).
 */
export function unrouted(resource: BlobResource, query: URLSearchParams, otherMethods: boolean): StorageError {
  if (otherMethods) return new StorageError('UnsupportedHttpVerb');
  const comp = (query.get('comp') ?? '').toLowerCase();
  const feature = featuresNotServed.get(comp);
  if (feature !== undefined) {
    return new StorageError('UnsupportedQueryParameter', `Cerulean does not serve ${feature} (comp=${comp}).`);
  }
  if (resource.kind === 'container' && query.get('restype') === null) {
    return new StorageError(
      'InvalidUri',
      'A container is addressed with restype=container; blobs of $root as /$root/{blob}.',
    );
  }
  const [name, value] = comp === '' ? ['restype', query.get('restype') ?? ''] : ['comp', query.get('comp')!];
  return invalidQueryParameter(name, value, 'The value is not valid for this resource.');
}

/**
 * A version (`versionid`) is read, its metadata read, deleted and copied from (operations/versions.ts);
 * writes refuse it themselves (refuseSnapshot). Any other operation naming one is refused before
 * routing, so that the base blob never answers in its place: tiers, block lists and leases of
 * versions are not served. Tags of versions are (operations/tags.ts). Same answer as featuresNotServed.
 */
export function refuseVersions(query: URLSearchParams): void {
  if (!query.has('versionid')) return;
  const comp = query.get('comp');
  if (comp !== null && !['metadata', 'tags'].includes(comp.toLowerCase())) {
    throw new StorageError('UnsupportedQueryParameter', `Cerulean does not serve comp=${comp} of blob versions.`);
  }
}
