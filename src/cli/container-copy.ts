// `cerulean copy --container`: containers and their blobs from one Blob endpoint to another,
// streamed blob by blob (src/cli/blob-transfer.ts), then checked: every blob copied is listed at the
// destination with the size read from the source.
import type { BlobEndpoint } from './blob-endpoint.js';
import { listCarriedBlobs, openBlob, readContainer, writeBlob, writeContainer } from './blob-transfer.js';
import { formatCount } from './command.js';
import type { Interruption } from './interrupt.js';

export interface ContainerCopy {
  readonly blobs: number;
  readonly bytes: number;
  /** Page blobs, which are not carried. */
  readonly skipped: number;
  /** Blobs missing at the destination or of another size there, one line each. */
  readonly differences: readonly string[];
  readonly interrupted: boolean;
}

export async function copyContainer(
  source: BlobEndpoint,
  destination: BlobEndpoint,
  name: string,
  interruption: Interruption,
): Promise<ContainerCopy> {
  const target = await writeContainer(destination.service, await readContainer(source.service, name));
  const container = source.service.getContainerClient(name);
  const { items, skipped } = await listCarriedBlobs(container);
  const sizes = new Map<string, number>();
  let bytes = 0;
  for (const item of items) {
    if (interruption.requested) break;
    const open = await openBlob(container, item);
    if (open === undefined) continue; // deleted since the listing
    bytes += await writeBlob(target, open);
    sizes.set(item.name, open.header.sizeBytes);
  }
  const differences: string[] = [];
  const found = new Map<string, number>();
  for await (const item of target.listBlobsFlat()) found.set(item.name, item.properties.contentLength ?? 0);
  for (const [blob, size] of sizes) {
    const there = found.get(blob);
    if (there === undefined) differences.push(`${blob}: missing at the destination`);
    else if (there !== size) differences.push(`${blob}: ${size} bytes at the source, ${there} at the destination`);
  }
  return { blobs: sizes.size, bytes, skipped, differences, interrupted: interruption.requested };
}

/** "photos: 3 blobs, 10,485,895 bytes copied, sizes match" and the differences, for stdout. */
export function describeContainerCopy(name: string, copied: ContainerCopy): string {
  const skipped = copied.skipped > 0 ? `, ${formatCount(copied.skipped)} page blobs skipped` : '';
  const verdict = copied.differences.length === 0 ? 'sizes match' : 'MISMATCH';
  const lines = [
    `${name}: ${formatCount(copied.blobs)} blobs, ${formatCount(copied.bytes)} bytes copied${skipped}, ${verdict}`,
    ...copied.differences.slice(0, 5).map((line) => `  ${line}`),
  ];
  if (copied.differences.length > 5) lines.push(`  … and ${copied.differences.length - 5} more`);
  return `${lines.join('\n')}\n`;
}
