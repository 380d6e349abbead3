// The one decoder of an entity operation, used by single requests and by $batch parts alike:
// verb, resource, condition headers and body become an EntityOperation, with the credential's
// permissions checked on the way (Azure REST: operations-on-entities, performing-entity-group-transactions).
import { parseEtag } from '../domain/etag.js';
import { StorageError } from '../errors.js';
import { decodeEntity, type EntityBody } from './wire/entity-text.js';
import type { EntityOperation, IfMatch } from './service/entities.js';
import type { Access } from '../http/authorize.js';
import { decodeUtf8 } from '../http/body.js';
import { headerText } from '../http/headers.js';
import type { Resource } from './resources.js';
import { sasNeeds } from '../http/sas.js';

export type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** A write addressed to a table's entities; undefined when (method, resource) names no write. */
export function decodeEntityOperation(
  method: string,
  resource: Resource,
  headers: Headers,
  body: Buffer,
  access: Access,
): EntityOperation | undefined {
  // `POST /{table}()` is an insert too: legacy .NET libraries send it (definition.ts, parseResource).
  if ((resource.kind === 'tableRoot' || resource.kind === 'entities') && method === 'POST') {
    access.require(sasNeeds.insertEntity, resource.table);
    const inserted = decodeBody(body);
    requireBodyKeys(access, inserted);
    return { kind: 'insert', body: inserted };
  }
  if (resource.kind !== 'entity') return undefined;
  const { keys, table } = resource;
  const ifNoneMatch = headers['if-none-match'] !== undefined;
  switch (method) {
    case 'PUT':
    case 'MERGE':
    case 'PATCH': {
      if (ifNoneMatch && method === 'PUT') {
        throw new StorageError('InvalidInput', 'If-None-Match HTTP header cannot be specified for PUT operations.');
      }
      const ifMatch = ifMatchOf(headers);
      if (ifNoneMatch && ifMatch !== undefined) {
        throw new StorageError(
          'InvalidInput',
          'Both If-Match and If-None-Match HTTP headers cannot be specified at the same time. Please specify either one of the headers or none of them.',
        );
      }
      // Without If-Match this is an upsert, which needs add and update (Azure REST: create-service-sas).
      access.require(ifMatch === undefined ? sasNeeds.upsertEntity : sasNeeds.updateEntity, table);
      access.requireKey(keys);
      return { kind: 'update', keys, body: decodeBody(body), mode: method === 'PUT' ? 'replace' : 'merge', ifMatch };
    }
    case 'DELETE': {
      if (ifNoneMatch)
        throw new StorageError('InvalidInput', 'If-None-Match HTTP header cannot be specified for DELETE operations.');
      const ifMatch = ifMatchOf(headers);
      // The service requires If-Match on delete (Azure REST: delete-entity1; code unverified).
      if (ifMatch === undefined) throw new StorageError('MissingRequiredHeader', 'The If-Match header is required.');
      access.require(sasNeeds.deleteEntity, table);
      access.requireKey(keys);
      return { kind: 'delete', keys, ifMatch };
    }
    default:
      return undefined;
  }
}

/**
 * `*` or an entity tag (domain/etag.ts: one this service never issued fails the condition, 412);
 * a value that is no entity tag at all is 400 InvalidInput.
 */
export function ifMatchOf(headers: Headers): IfMatch | undefined {
  const value = headers['if-match'];
  if (value === undefined) return undefined;
  const text = headerText(value).trim();
  if (text === '*') return { kind: 'any' };
  const timestamp = parseEtag(text);
  if (timestamp === undefined) {
    throw new StorageError(
      'InvalidInput',
      `The etag value '${text}' specified in one of the request headers is not valid. Please make sure only one etag value is specified and is valid.`,
    );
  }
  return { kind: 'version', timestamp };
}

/** A body naming both keys must lie in the credential's key range; one without is refused later. */
function requireBodyKeys(access: Access, body: EntityBody): void {
  const { partitionKey, rowKey } = body;
  if (partitionKey !== undefined && rowKey !== undefined) access.requireKey({ partitionKey, rowKey });
}

function decodeBody(body: Buffer): EntityBody {
  return decodeEntity(decodeUtf8(body));
}
