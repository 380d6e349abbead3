// The one error vocabulary: every expected failure is a StorageError carrying the Azure error code,
// its HTTP status and message (Azure REST: table-service-error-codes). http/ renders it; nothing else builds error
// bodies.
import assert from 'node:assert/strict';

export interface ErrorSpec {
  readonly status: number;
  readonly message: string;
}

/** Codes Cerulean emits, with status and the service's message text (Azure REST: table-service-error-codes). */
export const errorCodes = {
  /** Blob Batch: Delete Blob and Set Blob Tier parts in one batch (blob-batch; the SDKs' recorded tests). */
  AllBatchSubRequestsShouldBeSameApi: { status: 400, message: 'All batch subrequests should be the same api.' },
  AuthenticationFailed: {
    status: 403,
    message:
      'Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.',
  },
  AuthorizationFailure: { status: 403, message: 'This request is not authorized to perform this operation.' },
  AuthorizationPermissionMismatch: {
    status: 403,
    message: 'This request is not authorized to perform this operation using this permission.',
  },
  AuthorizationProtocolMismatch: {
    status: 403,
    message: 'This request is not authorized to perform this operation using this protocol.',
  },
  AuthorizationSourceIPMismatch: {
    status: 403,
    message: 'This request is not authorized to perform this operation using this source IP.',
  },
  AuthorizationResourceTypeMismatch: {
    status: 403,
    message: 'This request is not authorized to perform this operation using this resource type.',
  },
  AuthorizationServiceMismatch: {
    status: 403,
    message: 'This request is not authorized to perform this operation using this service.',
  },
  CommandsInBatchActOnDifferentPartitions: {
    status: 400,
    message: 'All commands in a batch must operate on same entity group.',
  },
  ConditionNotMet: { status: 412, message: 'The condition specified using HTTP conditional header(s) is not met.' },
  ContainerAlreadyExists: { status: 409, message: 'The specified container already exists.' },
  ContainerNotFound: { status: 404, message: 'The specified container does not exist.' },
  CorsPreflightFailure: { status: 403, message: 'CORS not enabled or no matching rule found for this request.' },
  DuplicatePropertiesSpecified: { status: 400, message: 'A property is specified more than one time.' },
  EntityAlreadyExists: { status: 409, message: 'The specified entity already exists.' },
  EntityTooLarge: { status: 400, message: 'The entity is larger than the maximum size permitted.' },
  /** Blob Batch: more than 256 parts (blob-batch). */
  ExceedsMaxBatchRequestCount: {
    status: 400,
    message: 'The batch operation exceeds maximum number of allowed subrequests.',
  },
  HostInformationNotPresent: {
    status: 400,
    message:
      'The required host information is not present in the request. You must send a non-empty Host header or include the absolute URI in the request line.',
  },
  InsufficientAccountPermissions: {
    status: 403,
    message: 'The account being accessed does not have sufficient permissions to execute this operation.',
  },
  InvalidAuthenticationInfo: {
    status: 401,
    message:
      'Server failed to authenticate the request. Please refer to the information in the www-authenticate header.',
  },
  InvalidDuplicateRow: { status: 400, message: 'An entity can appear only once in a batch.' },
  InvalidHeaderValue: {
    status: 400,
    message: 'The value provided for one of the HTTP headers was not in the correct format.',
  },
  InvalidHttpVerb: { status: 400, message: 'The HTTP verb specified was not recognized by the server.' },
  InvalidInput: { status: 400, message: 'One of the request inputs is not valid.' },
  InvalidMarker: { status: 400, message: 'The specified marker is invalid.' },
  InvalidMetadata: {
    status: 400,
    message: 'The metadata specified is invalid. It has characters that are not permitted.',
  },
  InvalidQueryParameterValue: {
    status: 400,
    message: 'An invalid value was specified for one of the query parameters in the request URI.',
  },
  InvalidResourceName: { status: 400, message: 'The specified resource name contains invalid characters.' },
  InvalidUri: { status: 400, message: 'The requested URI does not represent any resource on the server.' },
  InvalidXmlDocument: { status: 400, message: 'The specified XML is not syntactically valid.' },
  InvalidXmlNodeValue: {
    status: 400,
    message: 'The value provided for one of the XML nodes in the request body was not in the correct format.',
  },
  InternalError: { status: 500, message: 'The server encountered an internal error. Please retry the request.' },
  JsonFormatNotSupported: { status: 415, message: 'JSON format is not supported.' },
  KeyValueTooLarge: { status: 400, message: 'The size of the key value exceeds the maximum permitted.' },
  LeaseIdMismatchWithContainerOperation: {
    status: 412,
    message: 'The lease ID specified did not match the lease ID for the container.',
  },
  LeaseIdMissing: {
    status: 412,
    message: 'There is currently a lease on the container and no lease ID was specified in the request.',
  },
  LeaseNotPresentWithContainerOperation: {
    status: 412,
    message: 'There is currently no lease on the container.',
  },
  MessageNotFound: { status: 404, message: 'The specified message does not exist.' },
  MessageTooLarge: { status: 400, message: 'The message exceeds the maximum allowed size.' },
  MetadataTooLarge: { status: 400, message: 'The size of the request metadata exceeds the maximum size permitted.' },
  MethodNotAllowed: { status: 405, message: 'The requested method is not allowed on the specified resource.' },
  MissingRequiredHeader: { status: 400, message: 'A required HTTP header was not specified.' },
  MissingRequiredQueryParameter: {
    status: 400,
    message: 'A required query parameter was not specified for this request.',
  },
  MissingRequiredXmlNode: { status: 400, message: 'A required XML node was not specified in the request body.' },
  NotImplemented: { status: 501, message: 'The requested operation is not implemented on the specified resource.' },
  OperationTimedOut: { status: 500, message: 'The operation could not be completed within the permitted time.' },
  OutOfRangeInput: { status: 400, message: 'One of the request inputs is out of range.' },
  OutOfRangeQueryParameterValue: {
    status: 400,
    message: 'One of the query parameters specified in the request URI is outside the permissible range.',
  },
  PopReceiptMismatch: {
    status: 400,
    message: 'The specified pop receipt did not match the pop receipt for a dequeued message.',
  },
  PropertiesNeedValue: { status: 400, message: 'Values have not been specified for all properties in the entity.' },
  PropertyNameInvalid: { status: 400, message: 'The property name is invalid.' },
  PropertyNameTooLong: { status: 400, message: 'The property name exceeds the maximum allowed length.' },
  PropertyValueTooLarge: { status: 400, message: 'The property value is larger than the maximum size permitted.' },
  QueueAlreadyExists: { status: 409, message: 'The specified queue already exists.' },
  QueueNotFound: { status: 404, message: 'The specified queue does not exist.' },
  RequestBodyTooLarge: { status: 413, message: 'The size of the request body exceeds the maximum size permitted.' },
  RequestUrlFailedToParse: { status: 400, message: 'The url in the request could not be parsed.' },
  ResourceNotFound: { status: 404, message: 'The specified resource does not exist.' },
  ServerBusy: {
    status: 503,
    message: 'The server is currently unable to receive requests. Please retry your request.',
  },
  TableAlreadyExists: { status: 409, message: 'The table specified already exists.' },
  TableNotFound: { status: 404, message: 'The table specified does not exist.' },
  TooManyProperties: { status: 400, message: 'The entity contains more properties than allowed.' },
  UnsupportedHeader: { status: 400, message: 'One of the HTTP headers specified in the request is not supported.' },
  UnsupportedQueryParameter: {
    status: 400,
    message: 'One of the query parameters specified in the request URI is not supported.',
  },
  UnsupportedHttpVerb: { status: 405, message: "The resource doesn't support the specified HTTP verb." },
  UpdateConditionNotSatisfied: {
    status: 412,
    message: 'The update condition specified in the request was not satisfied.',
  },
  // -- Blob service: blobs, blocks, leases, conditions (blob-service-error-codes) --
  AppendPositionConditionNotMet: { status: 412, message: 'The append position condition specified was not met.' },
  BlobAlreadyExists: { status: 409, message: 'The specified blob already exists.' },
  BlobArchived: { status: 409, message: 'This operation is not permitted on an archived blob.' },
  BlobBeingRehydrated: {
    status: 409,
    message: 'This operation is not permitted because the blob is being rehydrated.',
  },
  BlobIsSealed: {
    status: 409,
    message:
      "The specified blob is sealed, and its contents can't be modified unless the blob is re-created after a delete.",
  },
  BlobNotFound: { status: 404, message: 'The specified blob does not exist.' },
  BothCrc64AndMd5HeaderPresent: {
    status: 400,
    message: 'Both x-ms-content-crc64 header and Content-MD5 header are present.',
  },
  BothCrc64AndMd5RangeHeaderPresent: {
    status: 400,
    message: 'Both x-ms-range-get-content-crc64 header and x-ms-range-get-content-md5 header are present.',
  },
  BothCrc64AndMsMd5HeaderPresent: {
    status: 400,
    message: 'Both x-ms-content-crc64 header and x-ms-blob-content-md5 header are present.',
  },
  BlockCountExceedsLimit: {
    status: 409,
    message: 'The committed block count cannot exceed the maximum limit of 50,000 blocks.',
  },
  BlockListTooLong: { status: 400, message: 'The block list may not contain more than 50,000 blocks.' },
  CannotVerifyCopySource: { status: 404, message: 'The specified blob does not exist.' },
  CopyAcrossAccountsNotSupported: {
    status: 400,
    message: 'The copy source account and destination account must be the same.',
  },
  Crc64Mismatch: {
    status: 400,
    message: 'The CRC64 value specified in the request did not match with the CRC64 value calculated by the server.',
  },
  InvalidBlobOrBlock: { status: 400, message: 'The specified blob or block content is invalid.' },
  InvalidBlobType: { status: 409, message: 'The blob type is invalid for this operation.' },
  InvalidPageRange: { status: 416, message: 'The page range specified is invalid.' },
  PreviousSnapshotNotFound: { status: 409, message: 'The previous snapshot is not found.' },
  SequenceNumberConditionNotMet: { status: 412, message: 'The sequence number condition specified was not met.' },
  SequenceNumberIncrementTooLarge: {
    status: 409,
    message:
      'The sequence number increment cannot be performed because it would result in overflow of the sequence number.',
  },
  InvalidBlockId: { status: 400, message: 'The specified block ID is invalid. The block ID must be Base64-encoded.' },
  InvalidBlockList: { status: 400, message: 'The specified block list is invalid.' },
  InvalidMd5: {
    status: 400,
    message: 'The MD5 value specified in the request is invalid. The MD5 value must be 128 bits and Base64-encoded.',
  },
  InvalidTag: {
    status: 400,
    message: 'The tags specified are invalid. It contains characters that are not permitted.',
  },
  InvalidRange: { status: 416, message: 'The range specified is invalid for the current size of the resource.' },
  LeaseAlreadyPresent: { status: 409, message: 'There is already a lease present.' },
  LeaseIdMismatchWithBlobOperation: {
    status: 412,
    message: 'The lease ID specified did not match the lease ID for the blob.',
  },
  LeaseIdMismatchWithLeaseOperation: {
    status: 409,
    message: 'The lease ID specified did not match the lease ID for the blob.',
  },
  LeaseIsBreakingAndCannotBeAcquired: {
    status: 409,
    message:
      'The lease ID matched, but the lease is currently in breaking state and cannot be acquired until it is broken.',
  },
  LeaseIsBreakingAndCannotBeChanged: {
    status: 409,
    message: 'The lease ID matched, but the lease is currently in breaking state and cannot be changed.',
  },
  LeaseIsBrokenAndCannotBeRenewed: {
    status: 409,
    message: 'The lease ID matched, but the lease has been broken explicitly and cannot be renewed.',
  },
  LeaseLost: { status: 412, message: 'A lease ID was specified, but the lease for the blob has expired.' },
  LeaseNotPresentWithBlobOperation: { status: 412, message: 'There is currently no lease on the blob.' },
  LeaseNotPresentWithLeaseOperation: { status: 409, message: 'There is currently no lease on the blob.' },
  MaxBlobSizeConditionNotMet: { status: 412, message: 'The max blob size condition specified was not met.' },
  Md5Mismatch: {
    status: 400,
    message: 'The MD5 value specified in the request did not match with the MD5 value calculated by the server.',
  },
  MissingContentLengthHeader: { status: 411, message: 'The Content-Length header was not specified.' },
  NoPendingCopyOperation: { status: 409, message: 'There is currently no pending copy operation.' },
  SourceConditionNotMet: {
    status: 412,
    message: 'The source condition specified using HTTP conditional header(s) is not met.',
  },
  SnapshotsPresent: { status: 409, message: 'This operation is not permitted because the blob has snapshots.' },
  // -- end of the Blob service's blob codes --
  // The Data Lake API's codes (data-lake-storage-gen2 path and filesystem operations, "Other Status Codes").
  DirectoryNotEmpty: {
    status: 409,
    message: 'The recursive query parameter value must be true to delete a non-empty directory.',
  },
  FilesystemAlreadyExists: { status: 409, message: 'The specified filesystem already exists.' },
  FilesystemNotFound: { status: 404, message: 'The specified filesystem does not exist.' },
  InvalidDestinationPath: {
    status: 400,
    message: 'The specified path, or an element of the path, is not a valid destination for this operation.',
  },
  InvalidFlushPosition: {
    status: 400,
    message:
      'The uploaded data is not contiguous or the position query parameter value is not equal to the length of the file after appending the uploaded data.',
  },
  InvalidPropertyName: { status: 400, message: 'The property name contains invalid characters.' },
  InvalidRenameSourcePath: {
    status: 400,
    message: 'The source directory cannot be the same as the destination directory.',
  },
  InvalidSourceUri: { status: 400, message: 'The source URI is invalid.' },
  PathAlreadyExists: { status: 409, message: 'The specified path already exists.' },
  PathConflict: {
    status: 409,
    message:
      'The specified path, or an element of the path, exists and its resource type is invalid for this operation.',
  },
  PathNotFound: { status: 404, message: 'The specified path does not exist.' },
  RenameDestinationParentPathNotFound: {
    status: 404,
    message: 'The parent directory of the destination path does not exist.',
  },
  SourcePathNotFound: { status: 404, message: 'The source path for a rename operation does not exist.' },
  XMethodIncorrectCount: { status: 400, message: 'More than one X-HTTP-Method is specified.' },
  XMethodIncorrectValue: { status: 400, message: 'The specified X-HTTP-Method is invalid.' },
  XMethodNotUsingPost: { status: 400, message: 'The request uses X-HTTP-Method with an HTTP verb other than POST.' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof errorCodes;

/**
 * Where the Blob and Queue services' XML error bodies word a message differently from the
 * documented table (common-rest-api-error-codes), the recorded answers of the service win: the
 * official SDKs' recorded tests show these texts. JSON (Table service) bodies keep the documented text.
 */
export const xmlMessages: Partial<Readonly<Record<ErrorCode, string>>> = {
  InvalidHeaderValue: 'The value for one of the HTTP headers is not in the correct format.',
  InvalidQueryParameterValue: 'Value for one of the query parameters specified in the request URI is invalid.',
};

/** A fact an XML error body names after <Message>, as <Name>value</Name>. */
export type ErrorElement = readonly [name: string, value: string];

/**
 * An expected failure with its Azure error code, in any service. `detail` replaces the default message; `elements`
 * are the facts the XML error body names after <Message>, in order (the <MaxLimit> of a queue's 413,
 * the <QueryParameterName> of a 400). JSON error bodies leave them out: the Table service's
 * `odata.error` has no place for them.
 */
export class StorageError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra text for authentication failures (Azure REST: status-and-error-codes2 AuthenticationErrorDetail). */
  readonly authDetail: string | undefined;
  readonly elements: readonly ErrorElement[];
  /** Headers the error reply carries besides the error code (a 416's Content-Range). */
  replyHeaders: Readonly<Record<string, string>> | undefined;

  constructor(code: ErrorCode, detail?: string, authDetail?: string, elements: readonly ErrorElement[] = []) {
    super(detail ?? errorCodes[code].message);
    assert(
      elements.every(([name]) => /^[A-Za-z][A-Za-z0-9]*$/.test(name)),
      'error detail names are XML names',
    );
    this.name = 'StorageError';
    this.code = code;
    this.status = errorCodes[code].status;
    this.authDetail = authDetail;
    this.elements = elements;
    this.replyHeaders = undefined;
  }
}

// The Blob and Queue services name the offending parameter or header in elements of the error body
// and keep the message fixed; recorded answers of the service show both (the official SDKs' recorded
// tests: numofmessages=100 on Get Messages, popreceipt=invalid on Delete Message, a bad
// x-ms-copy-source on Copy Blob).

/** 400 OutOfRangeQueryParameterValue naming the parameter, its value and the allowed range. */
export function outOfRangeQueryParameter(name: string, value: string, min: number, max: number): StorageError {
  return new StorageError('OutOfRangeQueryParameterValue', undefined, undefined, [
    ['QueryParameterName', name],
    ['QueryParameterValue', value],
    ['MinimumAllowed', String(min)],
    ['MaximumAllowed', String(max)],
  ]);
}

/** 400 InvalidQueryParameterValue naming the parameter and its value, with the reason. */
export function invalidQueryParameter(name: string, value: string, reason: string): StorageError {
  return new StorageError('InvalidQueryParameterValue', undefined, undefined, [
    ['QueryParameterName', name],
    ['QueryParameterValue', value],
    ['Reason', reason],
  ]);
}

/** 400 InvalidHeaderValue naming the header and its value (the service gives no reason). */
export function invalidHeaderValue(name: string, value: string): StorageError {
  return new StorageError('InvalidHeaderValue', undefined, undefined, [
    ['HeaderName', name],
    ['HeaderValue', value],
  ]);
}

export function fail(code: ErrorCode, detail?: string): never {
  throw new StorageError(code, detail);
}

/**
 * A failure of one operation of a $batch: reported as 202 with a single error part whose message
 * starts with `operationIndex:`, rather than as a top-level error.
 */
export class BatchOperationError extends StorageError {
  readonly operationIndex: number;

  constructor(operationIndex: number, code: ErrorCode, detail?: string) {
    super(code, detail);
    this.operationIndex = operationIndex;
  }
}

/** `error` with what caused it: for the server's log line, never sent to the client. */
export function causedBy<T extends Error>(error: T, cause: unknown): T {
  error.cause = cause;
  return error;
}

/** Error codes of a full disk: the file system's (out of space, out of quota), SQLite's and PostgreSQL's (53100). */
const diskFullCodes = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL', '53100']);

/**
 * A failure because the disk is full, as the answer the client gets: 503 ServerBusy, with the cause
 * in one line for the log (`disk full: …`); undefined for any other failure. A full disk is a
 * condition of the server, not of the request, and goes once space is freed: the service has no
 * code of its own for it, and ServerBusy is the 503 the SDKs retry with backoff. PostgreSQL's disk
 * full (SQLSTATE 53100) is recognised here too, for a write whose store did not map it itself.
 */
export function diskFullFailure(error: unknown): StorageError | undefined {
  if (error instanceof StorageError) return undefined;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const full =
    (typeof code === 'string' && diskFullCodes.has(code)) || /database or disk is full|no space left/i.test(message);
  if (!full) return undefined;
  const line = message.replace(/^\w+ failed: /, '').split('\n')[0]!;
  return causedBy(new StorageError('ServerBusy'), `disk full: ${line}${typeof code === 'string' ? ` (${code})` : ''}`);
}
