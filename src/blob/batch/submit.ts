// Blob Batch (https://learn.microsoft.com/rest/api/storageservices/blob-batch): Delete Blob or Set
// Blob Tier subrequests, up to 256, all of one kind, carried in one POST. Each part goes through
// the front door as an ordinary request would (call.embedded: the same route table, its own
// Shared Key signature or SAS, throttling and metrics as its own operation) and gets its own answer.
import { StorageError } from '../../errors.js';
import { firstHeader } from '../../http/headers.js';
import type { Reply } from '../../http/respond.js';
import type { EmbeddedAnswer, EmbeddedRoute, ServiceCall } from '../../http/service-definition.js';
import { batchPartsConcurrency } from '../limits.js';
import type { BlobServices } from '../services.js';
import { parseBatchBody, type BatchPart } from './parse.js';
import { batchReply } from './reply.js';

/** The operations a batch may carry (blob-batch), by their route table names. */
export const batchableOperations: ReadonlySet<string> = new Set(['DeleteBlob', 'SetBlobTier']);

/**
 * Submits a batch at service scope (`container` undefined) or container scope. Parts run
 * `batchPartsConcurrency` at a time: their writes share the store's group commits, and each part's
 * answer is written only once its own write is durable, as for an ordinary request.
 */
export async function submitBatch(call: ServiceCall<BlobServices>, container: string | undefined): Promise<Reply> {
  const parts = parseBatchBody(firstHeader(call.headers['content-type']), call.body);
  const routes = await Promise.all(parts.map((part) => call.embedded.routeOf(part)));
  const refused = routes.findIndex((route) => refusal(call.account, container, route) !== undefined);
  if (refused !== -1) return refusedBatch(call, parts[refused]!, refusal(call.account, container, routes[refused]!)!);
  // A part no route matches is not refused here: it gets the route table's own answer, as alone.
  const kinds = new Set(routes.map((route) => route.operation).filter((name) => batchableOperations.has(name)));
  if (kinds.size > 1) throw new StorageError('AllBatchSubRequestsShouldBeSameApi');
  const answers = await inBoundedParallel(parts, batchPartsConcurrency, (part) => call.embedded.answer(part));
  return batchReply(parts.map((part, index) => ({ contentId: part.contentId, answer: answers[index]! })));
}

/**
 * Why a routed part may not be in this batch: another operation than Delete Blob and Set Blob
 * Tier, another account, or (container scope) another container ("Any subrequests must be scoped
 * to the same container", blob-batch). The service's code for these is unverified: 400
 * InvalidInput (chosen).
 */
function refusal(account: string, container: string | undefined, route: EmbeddedRoute): StorageError | undefined {
  if (route.account === undefined) return undefined; // no resource: answered by the routing error
  if (route.account !== account) return new StorageError('InvalidInput', 'A subrequest names another account.');
  if (container !== undefined && route.resourceName?.split('/')[0] !== container) {
    return new StorageError('InvalidInput', `A subrequest is outside the container '${container}' of the batch.`);
  }
  if (route.operation === 'Unknown' || batchableOperations.has(route.operation)) return undefined;
  return new StorageError('InvalidInput', `A batch may hold Delete Blob or Set Blob Tier, not ${route.operation}.`);
}

/**
 * A batch with a part it may not hold is not run: 202 with that part alone, answered 400, as the
 * SDKs expect a batch whose subrequest is invalid (the JS SDK's parser: "subResponseCount == 1 is
 * special case where sub request is invalid").
 */
async function refusedBatch(call: ServiceCall<BlobServices>, part: BatchPart, error: StorageError): Promise<Reply> {
  const answer: EmbeddedAnswer = await call.embedded.refuse(part, error);
  return batchReply([{ contentId: part.contentId, answer }]);
}

/** `work` over `items`, at most `limit` at once; results in the items' order. */
async function inBoundedParallel<T, U>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<U>,
): Promise<U[]> {
  const results: U[] = new Array<U>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
