// The Data Lake API's limits, with their units and sources
// (https://learn.microsoft.com/rest/api/storageservices/datalakestoragegen2/path/update, path/list).
const MiB = 1024 * 1024;

/** One append's data: 4000 MiB (path/update: "up to 4000 MiB" for version 2019-12-12 and later). */
export const appendBytesMax = 4000 * MiB;
/** List Paths and List Filesystems: maxResults above 5000 are answered with 5000 (path/list). */
export const listPageMax = 5000;
/** Paths one step of a recursive delete's access check reads before it looks again. */
export const deleteStepMax = 1000;
/** Compare-and-swap attempts before a write gives up under contention (answered 503 ServerBusy). */
export const casAttemptsMax = 32;
