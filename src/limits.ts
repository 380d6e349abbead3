// Every limit Cerulean enforces, with its unit last in the name and its source.
// Key and string limits count UTF-16 code units; body limits count bytes.
import assert from 'node:assert/strict';

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * How long blob content no blob, snapshot or block list names any more stays on disk before the
 * reclaim removes it (--blob-reclaim-grace; docs/blob-storage.md#reclaiming-what-is-garbage-and-the-grace).
 */
export const blobReclaimGraceSecondsDefault = 60 * 60;
/**
 * How long a rehydration from the archive tier takes by default, in ms: 0, done when Set Blob Tier
 * or Copy Blob answers (202 still). The service takes up to 15 hours (archive-rehydrate-overview);
 * an emulator that made tests and apps wait that long would be useless, and one that waited a few
 * seconds would only make every test that rehydrates slower. --blob-rehydrate-delay sets a delay to
 * exercise code that polls for the end of a rehydration.
 */
export const blobRehydrateDelayMsDefault = 0;

/**
 * Custom properties per entity: 255 including PartitionKey, RowKey, Timestamp (Azure REST:
 * understanding-the-table-service-data-model).
 */
export const customPropertiesMax = 252;

/** Property name length (Azure REST: understanding-the-table-service-data-model). */
export const propertyNameLengthUtf16Max = 255;
/** Edm.String: 64 KiB = 32 Ki UTF-16 code units (Azure REST: understanding-the-table-service-data-model). */
export const stringValueLengthUtf16Max = 32 * KiB;
/** Edm.Binary: 64 KiB (Azure REST: understanding-the-table-service-data-model). */
export const binaryValueBytesMax = 64 * KiB;
/** Whole entity, by the accounting of Azure REST: understanding-the-table-service-data-model. */
export const entityBytesMax = 1 * MiB;
/**
 * PartitionKey and RowKey: 1 KiB read as 1,024 UTF-16 code units (Azure REST:
 * understanding-the-table-service-data-model, recommendation).
 */
export const keyLengthUtf16Max = 1 * KiB;
/** Request body; a $batch is capped at the same 4 MiB (Azure REST: performing-entity-group-transactions). */
export const bodyBytesMax = 4 * MiB;
/**
 * An authenticated client's oversized body is read and dropped up to this total, so that a client
 * that sends its whole body before reading (Python over TLS) gets its 413 rather than a reset.
 */
export const oversizeBodyReadBytesMax = 32 * MiB;
/**
 * A reply chosen before the body was read (authentication, routing, preflight, validation) waits
 * for at most this much more of the body, and this long, before it is sent; a body that has not
 * ended by then is left unread and the connection closed. This is all a client without
 * credentials can make the server read.
 */
export const unreadBodyDrainBytesMax = 64 * KiB;
export const unreadBodyDrainMs = 2_000;
/**
 * After a reply that closes the connection on an unread body: how long, and how much more, the server reads before
 * closing (http/linger.ts).
 */
export const lingerMs = 2_000;
export const lingerBytesMax = 64 * KiB;
/** Entities or tables in one query page (Azure REST: query-timeout-and-pagination). */
export const pageSizeMax = 1000;
/** Operations in one change set (Azure REST: performing-entity-group-transactions). */
export const batchOperationsMax = 100;
/** Discrete comparisons in one $filter (Azure REST: understanding-the-table-service-data-model). */
export const filterComparisonsMax = 15;
/** Nesting depth of parentheses / not in one $filter: stops hostile recursion. */
export const filterDepthMax = 32;
/** $filter text length: bounds lexer and parser work on hostile input. */
export const filterLengthUtf16Max = 32 * KiB;
/** Nesting of JSON request bodies: entities are flat objects, so this only stops hostile recursion. */
export const jsonDepthMax = 64;
/** Names and values of all metadata of a queue, container or blob together (naming-queues-and-metadata: 8 KiB). */
export const metadataBytesMax = 8 * 1024;
/** Stored access policies per table (Azure REST: set-table-acl). */
export const storedPoliciesMax = 5;
/** Stored access policy Id length (Azure REST: set-table-acl). */
export const storedPolicyIdLengthMax = 64;
/** CORS rules per account (Azure REST: understanding-the-table-service-data-model, unverified for Table). */
export const corsRulesMax = 5;
/** Entries in one CORS rule list (origins, methods, headers): Azure's documented 64 defined headers. */
export const corsListEntriesMax = 64;
/** Logging and metrics retention, in days (Get Table Service Properties docs). */
export const retentionDaysMax = 365;
/** Bearer tokens: shorter RSA verification keys are refused when the key file is loaded. */
export const bearerRsaModulusBitsMin = 2048;
/** Nesting and element count of XML bodies (ACL, service properties): stops hostile documents. */
export const xmlDepthMax = 16;
export const xmlElementsMax = 1024;
/** Clock skew allowed for bearer token exp/nbf, as for SAS times. */
export const bearerClockSkewMs = 5 * 60 * 1000;
/** x-ms-client-request-id (Azure REST: understanding-the-table-service-data-model). */
export const clientRequestIdLengthMax = 1024;
/** Table name length (Azure REST: understanding-the-table-service-data-model). */
export const tableNameLengthMax = 63;

/**
 * How long one query page may spend reading before it ends early with a continuation. The service
 * allows five seconds (https://learn.microsoft.com/rest/api/storageservices/query-timeout-and-pagination)
 * and so does Cerulean: a shorter clock bounds no work the row and byte caps below do not already
 * bound (queryRowsReadMax, pageBytesMax); it only splits pages more often than the service would
 * when the machine is busy, which every client must handle but none should see more than Azure gives.
 */
export const queryBudgetMs = 5000;
/** Bytes of entity properties in one query page: memory stays bounded even for 1 MiB entities. */
export const pageBytesMax = 16 * MiB;
/** Rows a query page may read before it returns a continuation, whatever the time. */
export const queryRowsReadMax = 200_000;

/**
 * Default for --max-requests: requests handled at once; more are answered 503 ServerBusy instead of queueing without
 * bound.
 */
export const requestsInFlightMax = 1024;
/** Open connections; node:http drops connections beyond this. */
export const connectionsMax = 10_000;
/** node:http bounds: a slow or silent client cannot pin the server. */
export const headersBytesMax = 64 * KiB;
export const headersTimeoutMs = 30_000;
export const requestTimeoutMs = 120_000;
/**
 * A service with streamed bodies (blob uploads and downloads of any size) has no bound on a whole
 * request, which a 1 GiB upload at a few MiB/s would outlast; instead a connection on which no byte
 * moves for this long is closed, so a stalled or silent client still cannot pin the server
 * (the connection cap bounds how many trickle along).
 */
export const streamIdleTimeoutMs = 120_000;
/**
 * An idle keep-alive connection is closed after this. Longer than the clients' own idle limits
 * (undici 4 s, the SDKs' agents keep sockets until the server closes them): a client that reuses
 * a pooled connection just as the server closes it sees `socket hang up`, which the SDKs do not
 * retry for a write; at 5 s a test or tool pausing a few seconds met that race.
 */
export const keepAliveTimeoutMs = 65_000;

/** Shared Key request dates may be this far from the server clock (Azure REST: authorize-with-shared-key). */
export const clockSkewMs = 15 * 60 * 1000;

// The workload watch and the throttle (src/observe) keep this much at most, whatever clients send.
/** Tables watched at once; past it the least busy one is forgotten. */
export const tablesWatchedMax = 256;
/** Partitions and $filter shapes kept per watched table (heavy hitters). */
export const partitionsWatchedMax = 32;
export const shapesWatchedMax = 32;
/** Once a table's partition set is full, a partition not in it gets in on about 1 miss in this many. */
export const partitionAdmitOneIn = 16;
/** Characters of a $filter shape kept; longer shapes are cut. */
export const shapeLengthMax = 512;
/** Partition token buckets of the throttle; past it, full (idle) ones go, then the least recently used. */
export const partitionBucketsMax = 10_000;
/** Fault rules in one document, and the longest injected latency. */
export const faultRulesMax = 100;
export const faultLatencyMsMax = 600_000;

assert(pageSizeMax <= 1000, 'the service never returns more than 1,000 results per page');
assert(batchOperationsMax === 100, 'a change set holds at most 100 operations');
assert(bodyBytesMax >= entityBytesMax, 'a maximal entity must fit in a request body');
assert(oversizeBodyReadBytesMax >= 4 * bodyBytesMax, 'an oversized body is drained well past the limit');
assert(corsRulesMax <= 5 && storedPoliciesMax <= 5, 'the service allows at most 5 CORS rules and 5 policies');
