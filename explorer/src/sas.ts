// Service SAS URLs for one table, signed in the browser with the account key (Azure REST: create-service-sas,
// signed version 2019-02-02): the same string-to-sign the server checks.
import { hmacBase64, type Credentials } from './api.js';

export const sasVersion = '2019-02-02';
/** Query, add, update, delete: the order the service expects. */
export const tablePermissions = ['r', 'a', 'u', 'd'] as const;

export interface SasRequest {
  readonly table: string;
  readonly permissions: string;
  /** ISO 8601 UTC, or '' for none. */
  readonly start: string;
  readonly expiry: string;
  /** A stored access policy that supplies the missing fields, or ''. */
  readonly policyId: string;
  readonly startPartitionKey: string;
  readonly startRowKey: string;
  readonly endPartitionKey: string;
  readonly endRowKey: string;
}

/** The SAS query string (without `?`). */
export async function tableSas(credentials: Credentials, request: SasRequest): Promise<string> {
  const fields = [
    request.permissions,
    request.start,
    request.expiry,
    `/table/${credentials.account}/${request.table.toLowerCase()}`,
    request.policyId,
    '', // sip: any address
    '', // spr: http and https (the local server speaks http)
    sasVersion,
    request.startPartitionKey,
    request.startRowKey,
    request.endPartitionKey,
    request.endRowKey,
  ];
  const sig = await hmacBase64(credentials.key, fields.join('\n'));
  const params: [string, string][] = [
    ['sv', sasVersion],
    ['tn', request.table],
    ['sp', request.permissions],
    ['st', request.start],
    ['se', request.expiry],
    ['si', request.policyId],
    ['spk', request.startPartitionKey],
    ['srk', request.startRowKey],
    ['epk', request.endPartitionKey],
    ['erk', request.endRowKey],
    ['sig', sig],
  ];
  return params
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join('&');
}
