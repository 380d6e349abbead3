// The Data Lake system tests' shared pieces: a DataLakeServiceClient for a running server (path-style
// blob endpoint, Shared Key, no retries) and the status and code of a failed SDK call.
import { DataLakeServiceClient, StorageSharedKeyCredential } from '@azure/storage-file-datalake';
import { blobEndpoint } from './blob.js';
import { devAccount, devKey, type RunningServer } from './server.js';

export function datalakeServiceClient(server: RunningServer): DataLakeServiceClient {
  const credential = new StorageSharedKeyCredential(devAccount, devKey);
  return new DataLakeServiceClient(blobEndpoint(server), credential, { retryOptions: { maxTries: 1 } });
}

/** The status and error code of a failed SDK call (undefined when it succeeded). */
export async function failure(action: Promise<unknown>): Promise<[number, string] | undefined> {
  try {
    await action;
    return undefined;
  } catch (error) {
    const { statusCode, code } = error as { statusCode: number; code: string };
    return [statusCode, code];
  }
}
