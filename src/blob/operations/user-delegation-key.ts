// Get User Delegation Key (https://learn.microsoft.com/rest/api/storageservices/get-user-delegation-key):
// a key for a Microsoft Entra principal to sign user delegation SAS with. Nothing is stored: the
// key's Value is derived from the account key and its fields (http/user-delegation.ts), so any
// process serving the account verifies the SAS it signs.
import { StorageError } from '../../errors.js';
import { firstHeader } from '../../http/headers.js';
import type { Reply } from '../../http/respond.js';
import type { ServiceCall } from '../../http/service-definition.js';
import { delegationKeyTime, parseDelegationTime } from '../../http/user-delegation.js';
import { childNamed, leafText, parseXml, writeXmlDocument } from '../../wire/xml.js';
import type { BlobServices } from '../services.js';
import { bodyText, xmlReply } from '../wire/reply-headers.js';

/** A key is valid for at most 7 days from now (get-user-delegation-key). */
export const delegationKeyLifetimeMsMax = 7 * 24 * 60 * 60 * 1000;

/** The first version that has the operation; a request naming none gets its key under this one. */
const delegationKeyVersionMin = '2018-11-09';

/**
 * 200 with the UserDelegationKey. Only a bearer token may ask: Shared Key is 403
 * AuthenticationFailed "Only authentication scheme Bearer is supported" (as the service answers);
 * no SAS grants the route (403 AuthorizationPermissionMismatch or ResourceTypeMismatch, as for any
 * operation a SAS cannot do; the service's answer to a SAS here is unverified).
 * Start (optional here: now) and Expiry must be ISO 8601 UTC times, Expiry after Start and after
 * now, and at most 7 days from now: otherwise 400 InvalidXmlNodeValue (the service's code for a
 * bad KeyInfo value is unverified).
 */
export async function getUserDelegationKey(call: ServiceCall<BlobServices>): Promise<Reply> {
  const principal = call.access.principal;
  if (principal === undefined) {
    throw new StorageError('AuthenticationFailed', undefined, 'Only authentication scheme Bearer is supported');
  }
  const root = parseXml(bodyText(call.body));
  if (root.name !== 'KeyInfo') throw new StorageError('InvalidXmlDocument', 'The root element must be KeyInfo.');
  const nowMs = call.services.clock.nowMs();
  const text = (name: string) => {
    const element = childNamed(root, name);
    return element === undefined ? undefined : leafText(element).trim();
  };
  const startMs = timeOf('Start', text('Start')) ?? nowMs;
  const expiryText = text('Expiry');
  if (expiryText === undefined) throw new StorageError('InvalidXmlDocument', 'KeyInfo must have an Expiry.');
  const expiryMs = timeOf('Expiry', expiryText)!;
  if (expiryMs <= startMs || expiryMs <= nowMs) {
    throw new StorageError('InvalidXmlNodeValue', 'The Expiry must be after the Start and after the current time.');
  }
  if (expiryMs > nowMs + delegationKeyLifetimeMsMax) {
    throw new StorageError('InvalidXmlNodeValue', 'The Expiry must be within 7 days of the current time.');
  }
  const version = firstHeader(call.headers['x-ms-version']) ?? delegationKeyVersionMin;
  const fields = {
    objectId: principal.objectId ?? principal.subject ?? '',
    tenantId: principal.tenantId ?? '',
    start: delegationKeyTime(startMs),
    expiry: delegationKeyTime(expiryMs),
    service: 'b',
    version,
    delegatedUserTenantId: text('DelegatedUserTid') ?? '',
  };
  const nodes = [
    { name: 'SignedOid', content: fields.objectId },
    { name: 'SignedTid', content: fields.tenantId },
    { name: 'SignedStart', content: fields.start },
    { name: 'SignedExpiry', content: fields.expiry },
    { name: 'SignedService', content: fields.service },
    { name: 'SignedVersion', content: fields.version },
    ...(fields.delegatedUserTenantId === ''
      ? []
      : [{ name: 'SignedDelegatedUserTid', content: fields.delegatedUserTenantId }]),
    { name: 'Value', content: call.delegationKeyValue(fields) },
  ];
  return xmlReply(200, writeXmlDocument({ name: 'UserDelegationKey', content: nodes }));
}

function timeOf(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseDelegationTime(text);
  if (ms === undefined)
    throw new StorageError('InvalidXmlNodeValue', `The ${name} '${text}' is not an ISO 8601 UTC time.`);
  return ms;
}
