// Find Blobs by Tags' response body (https://learn.microsoft.com/rest/api/storageservices/find-blobs-by-tags).
import { escapeXmlText } from '../../wire/xml.js';
import { writeNameElement } from '../wire/list-blobs-xml.js';
import { tagSetXml, type TagSet } from './tag-set.js';

export interface FoundBlob {
  readonly container: string;
  readonly name: string;
  readonly tags: TagSet;
}

export interface FoundBlobs {
  /** e.g. http://127.0.0.1:10000/devstoreaccount1/ */
  readonly serviceEndpoint: string;
  readonly where: string;
  readonly blobs: readonly FoundBlob[];
  /** '' on the last page. */
  readonly nextMarker: string;
}

export function writeFoundBlobs(found: FoundBlobs): string {
  const blobs = found.blobs
    .map(
      (blob) =>
        `<Blob>${writeNameElement(blob.name)}<ContainerName>${escapeXmlText(blob.container)}</ContainerName>` +
        `<Tags>${tagSetXml(blob.tags)}</Tags></Blob>`,
    )
    .join('');
  const next =
    found.nextMarker === '' ? '<NextMarker />' : `<NextMarker>${escapeXmlText(found.nextMarker)}</NextMarker>`;
  return (
    `<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="${escapeXmlText(found.serviceEndpoint)}">` +
    `<Where>${escapeXmlText(found.where)}</Where><Blobs>${blobs}</Blobs>${next}</EnumerationResults>`
  );
}
