// Checks on what every request carries whatever its operation: the Host header, x-ms-version and
// the `timeout` query parameter. They run before authentication; each failure is a 400.
import { StorageError } from '../errors.js';

const versionShape = /^\d{4}-\d{2}-\d{2}$/;
const positiveInteger = /^0*[1-9]\d*$/;

/** Service versions are dates (docs/protocol-notes.md#service-versions); any date-shaped one is accepted. */
export function isVersionShaped(value: string): boolean {
  return versionShape.test(value);
}

export function checkCommonInputs(
  httpVersion: string,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  query: URLSearchParams,
): void {
  if (httpVersion === '1.1' && (headers['host'] ?? '') === '') throw new StorageError('HostInformationNotPresent');
  const version = headers['x-ms-version'];
  // The service's code for a version that is no date is unverified; InvalidHeaderValue is the
  // common code for a malformed header (Azure REST: common-rest-api-error-codes). Repeated headers arrive joined:
  // refused too.
  if (version !== undefined && (typeof version !== 'string' || !isVersionShaped(version))) {
    throw new StorageError(
      'InvalidHeaderValue',
      `The value '${String(version)}' of the x-ms-version header is not a version (YYYY-MM-DD).`,
    );
  }
  // Azure REST: setting-timeouts-for-table-service-operations (unverified): the service may ignore timeout but refuses
  // a value that is
  // not a whole number of seconds; zero is refused too, as no request can finish in no time.
  for (const timeout of query.getAll('timeout')) {
    if (!positiveInteger.test(timeout)) {
      throw new StorageError(
        'InvalidQueryParameterValue',
        `The value '${timeout}' of the timeout query parameter is not a positive whole number of seconds.`,
      );
    }
  }
}
