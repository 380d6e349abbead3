// The Blob service's account-level operations: List Containers, Get/Set Blob Service Properties,
// Get Blob Service Stats and Get Account Information
// (https://learn.microsoft.com/rest/api/storageservices/operations-on-the-account--blob-service-).
import { invalidQueryParameter } from '../../errors.js';
import { int32Max, integerParam } from '../../http/query-params.js';
import type { Reply } from '../../http/respond.js';
import type { ServiceCall } from '../../http/service-definition.js';
import { writeServiceStats } from '../../wire/service-properties-xml.js';
import { parseBlobServiceProperties, writeBlobServiceProperties, writeContainerListing } from '../wire/xml.js';
import { decodeContainerState } from '../state/container.js';
import { listWithDeleted } from './container-soft-delete.js';
import type { BlobServices } from '../services.js';
import { bodyText, xmlReply } from '../wire/reply-headers.js';

type Call = ServiceCall<BlobServices>;

/** List Containers: 1 to 5,000 per page, 5,000 when unspecified (list-containers2). */
export const listContainersPageMax = 5000;

/**
 * Containers by name from `marker`; NextMarker is the name of the first container of the next
 * page (the service's markers are opaque; a name is what Azurite writes too).
 */
export async function listContainers(call: Call): Promise<Reply> {
  const { query } = call;
  const prefix = query.get('prefix') ?? undefined;
  const marker = query.get('marker') ?? undefined;
  const maxResults = integerParam(query, 'maxresults', { min: 1, max: int32Max });
  const includeText = query.get('include') ?? '';
  const include = includeText.split(',').filter((item) => item !== '');
  const unknown = include.find((item) => item !== 'metadata' && item !== 'system' && item !== 'deleted');
  if (unknown !== undefined) {
    throw invalidQueryParameter('include', includeText, `'${unknown}' is not a value of include.`);
  }
  const pageSize = Math.min(maxResults ?? listContainersPageMax, listContainersPageMax);
  const { page, nextMarker } = include.includes('deleted')
    ? await listWithDeleted(call, prefix ?? '', marker, pageSize)
    : await listLive(call, prefix ?? '', marker, pageSize);
  const body = writeContainerListing({
    serviceEndpoint: call.baseUrl,
    prefix,
    marker,
    maxResults,
    containers: page.map((record) => ({ ...record, state: decodeContainerState(record.state) })),
    withMetadata: include.includes('metadata'),
    nowMs: call.services.clock.nowMs(),
    nextMarker,
  });
  return xmlReply(200, body);
}

/** A page of live containers from the marker (a name), and the name after it ('' none). */
async function listLive(call: Call, prefix: string, marker: string | undefined, pageSize: number) {
  const fromName = marker === undefined || marker === '' ? undefined : marker;
  const records = await call.services.blobs.listContainers(call.account, prefix, fromName, pageSize + 1);
  return { page: records.slice(0, pageSize), nextMarker: records[pageSize]?.name ?? '' };
}

export async function getServiceProperties(call: Call): Promise<Reply> {
  return xmlReply(200, writeBlobServiceProperties(await call.services.properties.get(call.account)));
}

/** 202 Accepted (set-blob-service-properties); elements left out keep their values. */
export async function setServiceProperties(call: Call): Promise<Reply> {
  await call.services.properties.set(call.account, parseBlobServiceProperties(bodyText(call.body)));
  return { status: 202 };
}

/** The standby's replication status on the secondary; without a standby, the server is its own live replica. */
export async function getServiceStats(call: Call): Promise<Reply> {
  const { status, lastSyncTime } = call.services.replication?.status() ?? {
    status: 'live',
    lastSyncTime: new Date(call.services.clock.nowMs()),
  };
  return xmlReply(200, writeServiceStats(status, lastSyncTime));
}

/**
 * Get Account Information (get-account-information): a general-purpose v2 account with
 * locally redundant storage and a hierarchical namespace (every account has one: docs/datalake.md),
 * which tools read to know the Data Lake API's directories and access control are there.
 */
export async function getAccountInformation(): Promise<Reply> {
  return {
    status: 200,
    headers: {
      'x-ms-sku-name': 'Standard_LRS',
      'x-ms-account-kind': 'StorageV2',
      'x-ms-is-hns-enabled': 'true',
    },
  };
}
