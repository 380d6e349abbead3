// The Blob service's XML bodies that the service and container operations answer: the List
// Containers listing and the blob flavour of the service properties
// (https://learn.microsoft.com/rest/api/storageservices/list-containers2,
// https://learn.microsoft.com/rest/api/storageservices/get-blob-service-properties). Pure: text in, text out.
import { StorageError } from '../../errors.js';
import { isVersionShaped } from '../../http/request-checks.js';
import {
  parseServiceProperties,
  retentionPolicyOf,
  writeServiceProperties,
} from '../../wire/service-properties-xml.js';
import { childNamed, escapeXmlText, leafText, parseXml, writeXmlNode, type XmlNode } from '../../wire/xml.js';
import type { ContainerState } from '../state/container.js';
import type { BlobServiceProperties, BlobServicePropertiesUpdate, DeleteRetentionPolicy } from '../services.js';
import { leaseHeaders } from '../state/leases.js';
import { visibleEtag } from './etag.js';
import { httpDate } from './reply-headers.js';

const declaration = '<?xml version="1.0" encoding="utf-8"?>';

/** What a listing repeats of its request, each only when the request gave it (list-containers2, list-blobs). */
export interface ListingEcho {
  readonly prefix?: string | undefined;
  readonly marker?: string | undefined;
  readonly maxResults?: number | undefined;
}

/**
 * The echo's Prefix, Marker and MaxResults elements. Characters XML cannot carry come out as U+FFFD
 * (escapeXmlText): the SDKs read these elements as plain text, so an Encoded form would reach them as
 * an object instead of a string; the echo is informational.
 */
export function echoNodes(echo: ListingEcho): XmlNode[] {
  const nodes: XmlNode[] = [];
  if (echo.prefix !== undefined) nodes.push({ name: 'Prefix', content: echo.prefix });
  if (echo.marker !== undefined) nodes.push({ name: 'Marker', content: echo.marker });
  if (echo.maxResults !== undefined) nodes.push({ name: 'MaxResults', content: String(echo.maxResults) });
  return nodes;
}

export interface ListedContainer {
  readonly name: string;
  readonly etag: string;
  readonly lastModifiedMs: number;
  readonly state: ContainerState;
  /** A soft-deleted container (include=deleted): its version, when it was deleted, the whole days left. */
  readonly deleted?: { readonly version: string; readonly deletedMs: number; readonly remainingDays: number };
}

export interface ContainerListing extends ListingEcho {
  /** e.g. http://127.0.0.1:10000/devstoreaccount1 */
  readonly serviceEndpoint: string;
  readonly containers: readonly ListedContainer[];
  readonly withMetadata: boolean;
  readonly nowMs: number;
  /** Empty when this page is the last. */
  readonly nextMarker: string;
}

export function writeContainerListing(listing: ContainerListing): string {
  const content = echoNodes(listing);
  const containers = listing.containers.map((container): XmlNode => {
    const deleted = container.deleted;
    const fields: XmlNode[] = [
      { name: 'Name', content: container.name },
      // list-containers2: Deleted and Version after the name, DeletedTime and
      // RemainingRetentionDays last in the properties.
      ...(deleted === undefined
        ? []
        : [
            { name: 'Deleted', content: 'true' },
            { name: 'Version', content: deleted.version },
          ]),
      { name: 'Properties', content: containerProperties(container, listing.nowMs) },
    ];
    if (listing.withMetadata) {
      const entries = container.state.metadata.map(([name, value]): XmlNode => ({ name, content: value }));
      fields.push({ name: 'Metadata', content: entries });
    }
    return { name: 'Container', content: fields };
  });
  content.push({ name: 'Containers', content: containers });
  content.push({ name: 'NextMarker', content: listing.nextMarker });
  const inner = content.map(writeXmlNode).join('');
  const endpoint = escapeXmlText(listing.serviceEndpoint);
  return `${declaration}<EnumerationResults ServiceEndpoint="${endpoint}">${inner}</EnumerationResults>`;
}

function containerProperties(container: ListedContainer, nowMs: number): XmlNode[] {
  const lease = leaseHeaders(container.state.lease, nowMs);
  const fields: XmlNode[] = [
    { name: 'Last-Modified', content: httpDate(container.lastModifiedMs) },
    // Quoted, unlike List Blobs' (the service's sample responses; unverified beyond them).
    { name: 'Etag', content: visibleEtag(container.etag) },
    { name: 'LeaseStatus', content: lease['x-ms-lease-status']! },
    { name: 'LeaseState', content: lease['x-ms-lease-state']! },
  ];
  const duration = lease['x-ms-lease-duration'];
  if (duration !== undefined) fields.push({ name: 'LeaseDuration', content: duration });
  const access = container.state.publicAccess;
  if (access !== undefined) fields.push({ name: 'PublicAccess', content: access });
  fields.push(
    { name: 'HasImmutabilityPolicy', content: 'false' },
    { name: 'HasLegalHold', content: 'false' },
    { name: 'DefaultEncryptionScope', content: '$account-encryption-key' },
    { name: 'DenyEncryptionScopeOverride', content: 'false' },
  );
  const deleted = container.deleted;
  if (deleted !== undefined) {
    fields.push(
      { name: 'DeletedTime', content: httpDate(deleted.deletedMs) },
      { name: 'RemainingRetentionDays', content: String(deleted.remainingDays) },
    );
  }
  return fields;
}

/** The features of Set Blob Service Properties that Cerulean keeps off: enabling one is refused. */
const featuresOff = ['StaticWebsite', 'ContainerDeleteRetentionPolicy'] as const;

/**
 * Set Blob Service Properties: the settings every service has (logging, metrics, CORS), kept, and
 * DefaultServiceVersion, kept when it is a date-shaped version (anything else is 400
 * InvalidXmlNodeValue; which versions the service accepts is unverified), and DeleteRetentionPolicy
 * (blob soft delete: Days 1-365 when enabled, else 400 InvalidXmlNodeValue). ContainerDeleteRetentionPolicy
 * (container soft delete is a server option here: operations/container-soft-delete.ts) and the
 * static website cannot be set: a body that enables one is 400 InvalidXmlNodeValue (the service
 * would keep them; refusing says so rather than pretend).
 */
export function parseBlobServiceProperties(text: string): BlobServicePropertiesUpdate {
  const update = parseServiceProperties(text);
  const root = parseXml(text);
  for (const feature of featuresOff) {
    const element = childNamed(root, feature);
    const enabled = element === undefined ? undefined : childNamed(element, 'Enabled');
    if (enabled !== undefined && leafText(enabled).trim() === 'true') {
      const how =
        feature === 'ContainerDeleteRetentionPolicy'
          ? 'container soft delete is the server option --container-soft-delete-days (Azure: an account setting).'
          : 'Cerulean does not serve it.';
      throw new StorageError('InvalidXmlNodeValue', `${feature} cannot be enabled here: ${how}`);
    }
  }
  const retentionElement = childNamed(root, 'DeleteRetentionPolicy');
  const withRetention =
    retentionElement === undefined ? update : { ...update, deleteRetentionPolicy: deleteRetentionOf(retentionElement) };
  const versionElement = childNamed(root, 'DefaultServiceVersion');
  if (versionElement === undefined) return withRetention;
  const defaultServiceVersion = leafText(versionElement).trim();
  if (!isVersionShaped(defaultServiceVersion)) {
    throw new StorageError(
      'InvalidXmlNodeValue',
      `The DefaultServiceVersion '${defaultServiceVersion}' is not a version.`,
    );
  }
  return { ...withRetention, defaultServiceVersion };
}

/** DeleteRetentionPolicy: Enabled, Days (1-365, when enabled) and AllowPermanentDelete (default false). */
function deleteRetentionOf(element: Parameters<typeof retentionPolicyOf>[0] & object): DeleteRetentionPolicy {
  const policy = retentionPolicyOf(element);
  if (!policy.enabled) return { enabled: false };
  const permanent = childNamed(element, 'AllowPermanentDelete');
  const permanentText = permanent === undefined ? 'false' : leafText(permanent).trim();
  if (permanentText !== 'true' && permanentText !== 'false') {
    throw new StorageError('InvalidXmlNodeValue', `The value '${permanentText}' of AllowPermanentDelete is not valid.`);
  }
  // True lets Delete Blob's deletetype=permanent remove soft-deleted snapshots and versions
  // (operations/soft-delete.ts).
  return { enabled: true, days: policy.days!, allowPermanentDelete: permanentText === 'true' };
}

function deleteRetentionNode(policy: DeleteRetentionPolicy | undefined): XmlNode {
  if (policy?.enabled !== true)
    return { name: 'DeleteRetentionPolicy', content: [{ name: 'Enabled', content: 'false' }] };
  return {
    name: 'DeleteRetentionPolicy',
    content: [
      { name: 'Enabled', content: 'true' },
      { name: 'Days', content: String(policy.days) },
      { name: 'AllowPermanentDelete', content: String(policy.allowPermanentDelete === true) },
    ],
  };
}

/**
 * Get Blob Service Properties: the shared elements, DefaultServiceVersion when one was set, then soft
 * delete and static website, both off (the order of get-blob-service-properties).
 */
export function writeBlobServiceProperties(properties: BlobServiceProperties): string {
  const shared = writeServiceProperties(properties);
  const off = (name: string): XmlNode => ({ name, content: [{ name: 'Enabled', content: 'false' }] });
  const version = properties.defaultServiceVersion;
  const extras = [
    ...(version === undefined ? [] : [{ name: 'DefaultServiceVersion', content: version }]),
    deleteRetentionNode(properties.deleteRetentionPolicy),
    off('StaticWebsite'),
  ];
  const end = '</StorageServiceProperties>';
  if (!shared.endsWith(end)) throw new Error('the service properties document ends with its root element');
  return `${shared.slice(0, -end.length)}${extras.map(writeXmlNode).join('')}${end}`;
}
