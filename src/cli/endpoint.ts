// Where a command's tables live: a connection string, a SAS URL, or the local server's
// development account. Every remote call goes through the official SDK.
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  TableClient,
  TableServiceClient,
  type TableServiceClientOptions,
} from '@azure/data-tables';
import { readFileSync } from 'node:fs';
import { doubleLiteralsPolicy } from './double-literals.js';

/** The well-known development account (the server always has it; so do Azurite and the SDKs). */
const devAccountName = 'devstoreaccount1';
const devAccountKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
export const defaultEndpointUrl = `http://127.0.0.1:10002/${devAccountName}`;
export const connectionStringVariable = 'AZURE_TABLES_CONNECTION_STRING';

export interface Endpoint {
  /** For messages: the account URL, never a key or a signature. */
  readonly label: string;
  /** For Cerulean's own endpoints (/_insights, /_faults): where, and the key to sign with if known. */
  readonly admin: AdminTarget;
  /** The table a service SAS URL names, if it names one. */
  readonly namedTable: string | undefined;
  /** `retries: false` leaves retrying to the caller (writes retry with their own backoff). */
  service(retries?: boolean): TableServiceClient;
  tableClient(name: string, retries?: boolean): TableClient;
}

export interface AdminTarget {
  /** Scheme, host and port: the admin paths live at the root, beside the accounts. */
  readonly origin: string;
  readonly account: string;
  /** Absent for SAS endpoints: then only what needs no signature (insights from loopback) works. */
  readonly key: Buffer | undefined;
}

/** Tells the server (its insights) that a request came from this CLI, not from an application. */
export const cliUserAgent = `cerulean-cli/${packageVersion()}`;

/**
 * `text` is a connection string (`AccountName=…;AccountKey=…`, `UseDevelopmentStorage=true`,
 * `…;SharedAccessSignature=…`) or an http(s) URL: an account or table URL with a SAS query, or
 * the development account's URL without one. Undefined: the environment variable, else the
 * local development account.
 */
export function resolveEndpoint(text: string | undefined, env: NodeJS.ProcessEnv = process.env): Endpoint {
  const given = text ?? env[connectionStringVariable];
  if (given === undefined || given.trim() === '') return urlEndpoint(defaultEndpointUrl);
  return /^https?:\/\//i.test(given.trim()) ? urlEndpoint(given.trim()) : connectionStringEndpoint(given.trim());
}

function clientOptions(retries: boolean): TableServiceClientOptions {
  return {
    allowInsecureConnection: true,
    userAgentOptions: { userAgentPrefix: cliUserAgent },
    ...(retries ? {} : { retryOptions: { maxRetries: 0 } }),
    // Closer to the wire than the SDK's deserialization, so it sees the body first.
    additionalPolicies: [{ policy: doubleLiteralsPolicy, position: 'perRetry' }],
  };
}

function connectionStringEndpoint(connectionString: string): Endpoint {
  const pairs = connectionStringPairs(connectionString);
  let probe: TableServiceClient;
  try {
    probe = TableServiceClient.fromConnectionString(connectionString, clientOptions(true));
  } catch (error) {
    throw new Error(`not a valid connection string: ${(error as Error).message}`);
  }
  const development = pairs.get('usedevelopmentstorage')?.toLowerCase() === 'true';
  const account = development ? devAccountName : (pairs.get('accountname') ?? '');
  const key = development ? devAccountKey : pairs.get('accountkey');
  return {
    label: probe.url,
    admin: {
      origin: new URL(probe.url).origin,
      account,
      key: key === undefined ? undefined : Buffer.from(key, 'base64'),
    },
    namedTable: undefined,
    service: (retries = true) => TableServiceClient.fromConnectionString(connectionString, clientOptions(retries)),
    tableClient: (name, retries = true) =>
      TableClient.fromConnectionString(connectionString, name, clientOptions(retries)),
  };
}

const connectionStringHelp =
  'give AccountName=…;AccountKey=…[;TableEndpoint=…], UseDevelopmentStorage=true, ' +
  '…;SharedAccessSignature=…, or an http(s) URL';

/**
 * The `name=value` pairs of a connection string, names in lower case. Checked here because the
 * SDK's own parser answers nonsense with a TypeError ("Cannot read properties of undefined").
 * The text is not repeated in the message: it may hold a key.
 */
function connectionStringPairs(text: string): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const part of text.split(';')) {
    if (part.trim() === '') continue;
    const equals = part.indexOf('=');
    if (equals <= 0) throw new Error(`not a valid connection string or URL: ${connectionStringHelp}`);
    pairs.set(part.slice(0, equals).trim().toLowerCase(), part.slice(equals + 1).trim());
  }
  const development = pairs.get('usedevelopmentstorage')?.toLowerCase() === 'true';
  const signed = pairs.has('sharedaccesssignature') && (pairs.has('tableendpoint') || pairs.has('accountname'));
  if (!development && !signed && !(pairs.has('accountname') && pairs.has('accountkey'))) {
    throw new Error(`not a valid connection string: it names no account and key; ${connectionStringHelp}`);
  }
  return pairs;
}

export function packageVersion(): string {
  const file = new URL('../../../package.json', import.meta.url);
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/**
 * Path-style URLs (an IP address or localhost, as emulators use) carry the account as the first
 * path segment; host-style URLs (`account.table.core.windows.net`) as the first DNS label. A
 * further path segment names a table.
 */
function urlEndpoint(text: string): Endpoint {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`not a valid URL: ${text}`);
  }
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  const pathStyle = url.hostname === 'localhost' || /^[\d.]+$/.test(url.hostname) || url.hostname.startsWith('[');
  const account = pathStyle ? segments.shift() : url.hostname.split('.')[0];
  if (account === undefined) throw new Error(`the URL names no account: ${url.origin}${url.pathname}`);
  const table = segments[0]?.replace(/\(\)$/, '');
  const accountUrl = `${url.origin}${pathStyle ? `/${account}` : ''}`;
  const sas = url.search.replace(/^\?/, '');
  const admin = { origin: url.origin, account, key: sas === '' ? Buffer.from(devAccountKey, 'base64') : undefined };
  const endpoint = { label: accountUrl, namedTable: table, admin };
  if (sas !== '') {
    const credential = new AzureSASCredential(sas);
    return {
      ...endpoint,
      service: (retries = true) => new TableServiceClient(accountUrl, credential, clientOptions(retries)),
      tableClient: (name, retries = true) => new TableClient(accountUrl, name, credential, clientOptions(retries)),
    };
  }
  if (account !== devAccountName) throw new Error(`the URL has no shared access signature: ${accountUrl}`);
  const credential = new AzureNamedKeyCredential(devAccountName, devAccountKey);
  return {
    ...endpoint,
    service: (retries = true) => new TableServiceClient(accountUrl, credential, clientOptions(retries)),
    tableClient: (name, retries = true) => new TableClient(accountUrl, name, credential, clientOptions(retries)),
  };
}
