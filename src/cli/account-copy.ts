// `cerulean copy` of a whole account, service by service: which services a copy takes (every one
// both connection strings reach, or --only, or those whose items -t/--queue/--container name), and
// the queue and blob halves (tables stay in commands/copy.ts). Each service ends with one summary
// line on stderr; each queue and container with one line on stdout.
import { connectionReaches, resolveBlobEndpoint } from './blob-endpoint.js';
import { blobError } from './blob-errors.js';
import { listContainerNames } from './blob-transfer.js';
import { CliError, formatCount } from './command.js';
import { copyContainer, describeContainerCopy } from './container-copy.js';
import type { Interruption } from './interrupt.js';
import { startTransferProgress } from './progress.js';
import { checkQueue, copyQueue, type QueueCopy, type QueueMessageMode } from './queue-copy.js';
import type { QueueServiceClient } from '@azure/storage-queue';
import { resolveQueueEndpoint } from './queue-endpoint.js';
import { queueError } from './commands/queues.js';

export const copyServices = ['tables', 'queues', 'blobs'] as const;
export type CopyService = (typeof copyServices)[number];

const endpointNames = { tables: 'TableEndpoint', queues: 'QueueEndpoint', blobs: 'BlobEndpoint' } as const;

/** `--only tables,blobs` */
export function parseServices(text: string): CopyService[] {
  const words = text.split(',').map((word) => word.trim().toLowerCase());
  const unknown = words.find((word) => !(copyServices as readonly string[]).includes(word));
  if (unknown !== undefined) throw new CliError(`--only takes ${copyServices.join(', ')}, not '${unknown}'`, 2);
  return copyServices.filter((service) => words.includes(service));
}

export interface ServiceChoice {
  readonly services: readonly CopyService[];
  /** A line for each service left out because a connection string does not reach it. */
  readonly notes: readonly string[];
}

/**
 * Named items choose their services; else --only; else every service both ends reach (an http(s)
 * URL, a SAS, is taken as a Table endpoint unless a service is asked for). A service asked for
 * that an end does not reach is a usage error.
 */
export function chooseServices(
  source: string,
  destination: string,
  only: readonly CopyService[] | undefined,
  named: Record<CopyService, readonly string[]>,
): ServiceChoice {
  const namedServices = copyServices.filter((service) => named[service].length > 0);
  const asked = namedServices.length > 0 ? namedServices : only;
  const reaches = (text: string, service: CopyService) =>
    /^https?:\/\//i.test(text.trim())
      ? asked !== undefined || service === 'tables'
      : connectionReaches(text, endpointNames[service]);
  const services: CopyService[] = [];
  const notes: string[] = [];
  for (const service of asked ?? copyServices) {
    const missing = !reaches(source, service) ? 'source' : !reaches(destination, service) ? 'destination' : undefined;
    if (missing === undefined) services.push(service);
    else if (asked !== undefined)
      throw new CliError(`${service}: the ${missing} connection string names no ${endpointNames[service]}`, 2);
    else notes.push(`copy: ${service} not copied: the ${missing} names no ${endpointNames[service]}`);
  }
  return { services, notes };
}

export interface ServiceOutcome {
  /** The service's summary line, for stderr. */
  readonly summary: string;
  /** Items whose check failed. */
  readonly failed: readonly string[];
  /** Set when interrupted: what was done, for the exit message. */
  readonly interrupted?: string;
}

export interface QueueCopyOptions {
  readonly names: readonly string[];
  readonly mode: QueueMessageMode;
  readonly interruption: Interruption;
}

export async function copyQueues(
  source: string,
  destination: string,
  options: QueueCopyOptions,
): Promise<ServiceOutcome> {
  const from = resolveQueueEndpoint(source);
  const to = resolveQueueEndpoint(destination);
  const names = options.names.length > 0 ? [...options.names] : await listQueueNames(from.service, from.label);
  const totals = { queues: 0, messages: 0, bytes: 0, left: 0 };
  const failed: string[] = [];
  for (const name of names) {
    let copied: QueueCopy;
    let differences: string[];
    try {
      copied = await copyQueue(from.service, to.service, name, options.mode, options.interruption);
      differences = copied.interrupted ? [] : await checkQueue(to.service, name, copied);
    } catch (error) {
      throw queueError(error, name);
    }
    process.stdout.write(describeQueueCopy(name, copied, differences));
    totals.queues++;
    totals.messages += copied.messages;
    totals.bytes += copied.bytes;
    totals.left += copied.left;
    if (copied.interrupted)
      return {
        summary: '',
        failed,
        interrupted: `${names.indexOf(name)} of ${names.length} queue(s) copied, ${name} in part`,
      };
    if (differences.length > 0) failed.push(name);
  }
  const left = totals.left > 0 ? `, ${formatCount(totals.left)} not copied (see above)` : '';
  const summary =
    `queues: ${formatCount(totals.queues)} copied with their metadata, ${formatCount(totals.messages)} messages ` +
    `(${formatCount(totals.bytes)} bytes of text)${left}; not carried: message ids, insertion times, dequeue counts, ` +
    'invisible messages; time to live: what remained by this clock';
  return { summary, failed };
}

export async function listQueueNames(service: QueueServiceClient, label: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const queue of service.listQueues()) names.push(queue.name);
  } catch (error) {
    throw queueError(error, label);
  }
  return names;
}

function describeQueueCopy(name: string, copied: QueueCopy, differences: readonly string[]): string {
  const parts = [`${name}: ${formatCount(copied.messages)} messages copied`];
  if (copied.alreadyThere > 0)
    parts.push(`the destination holds ${formatCount(copied.alreadyThere)} already (none copied again)`);
  if (copied.left > 0)
    parts.push(`${formatCount(copied.left)} not copied (--queue-messages all copies every visible one)`);
  const verdict = copied.interrupted ? 'interrupted' : differences.length === 0 ? 'counts match' : 'MISMATCH';
  return [`${parts.join(', ')}, ${verdict}`, ...differences.map((line) => `  ${line}`)].join('\n') + '\n';
}

export interface BlobCopyOptions {
  readonly names: readonly string[];
  readonly verifyContent: boolean;
  readonly interruption: Interruption;
}

export async function copyContainers(
  source: string,
  destination: string,
  options: BlobCopyOptions,
): Promise<ServiceOutcome> {
  const from = resolveBlobEndpoint(source);
  const to = resolveBlobEndpoint(destination);
  const names =
    options.names.length > 0
      ? [...options.names]
      : await listContainerNames(from.service).catch((error: unknown) => {
          throw blobError(error, from.label);
        });
  const totals = {
    containers: 0,
    blobs: 0,
    bytes: 0,
    identical: 0,
    skipped: 0,
    tagsNotCarried: 0,
    accessNotCarried: 0,
  };
  const failed: string[] = [];
  for (const name of names) {
    const progress = startTransferProgress(`copy ${name}`, 'blobs');
    const copy = { interruption: options.interruption, verifyContent: options.verifyContent, progress };
    const copied = await copyContainer(from, to, name, copy).catch((error: unknown) => {
      throw blobError(error, `container ${name}`);
    });
    progress.finish();
    process.stdout.write(describeContainerCopy(name, copied, options.verifyContent));
    totals.containers++;
    totals.blobs += copied.blobs;
    totals.bytes += copied.bytes;
    totals.identical += copied.identical;
    totals.skipped += copied.skipped.length;
    if (copied.tagsNotCarried !== undefined) totals.tagsNotCarried++;
    if (copied.accessNotCarried !== undefined) totals.accessNotCarried++;
    if (copied.interrupted) {
      const done = `${names.indexOf(name)} of ${names.length} container(s) copied, ${name} in part; run the copy again`;
      return { summary: '', failed, interrupted: done };
    }
    if (copied.differences.length > 0) failed.push(name);
  }
  const identical = totals.identical > 0 ? `, ${formatCount(totals.identical)} identical already there` : '';
  const skipped = totals.skipped > 0 ? `, ${formatCount(totals.skipped)} skipped (see above)` : '';
  const tags =
    totals.tagsNotCarried > 0 ? `, tags not carried in ${formatCount(totals.tagsNotCarried)} (see above)` : '';
  const access =
    totals.accessNotCarried > 0
      ? `, access control not carried in ${formatCount(totals.accessNotCarried)} (see above)`
      : '';
  const check = options.verifyContent ? 'sizes and checksums match' : 'sizes match';
  const summary =
    `blobs: ${formatCount(totals.containers)} container(s), ${formatCount(totals.blobs)} blobs copied, ` +
    `${formatCount(totals.bytes)} bytes${identical}${skipped}${tags}${access}${failed.length === 0 ? `, ${check}` : ''}`;
  return { summary, failed };
}
