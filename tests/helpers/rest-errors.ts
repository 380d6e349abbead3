// Asserting the official JS SDKs' errors: one RestError class (@azure/core-rest-pipeline) for the
// blob, queue and table clients.
import assert from 'node:assert/strict';
import { RestError } from '@azure/core-rest-pipeline';

/** `work` fails with the service's status and error code. */
export async function refused(work: Promise<unknown>, status: number, code: string): Promise<void> {
  await assert.rejects(work, (error: unknown) => {
    assert.ok(error instanceof RestError, String(error));
    assert.equal(error.statusCode, status, error.message);
    // A HEAD's error has no body: the SDK reads the code from x-ms-error-code into details.
    const details = error.details as { errorCode?: string } | undefined;
    assert.equal(error.code ?? details?.errorCode, code, error.message);
    return true;
  });
}
