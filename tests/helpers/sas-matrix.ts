// The SAS matrix runner shared by the Blob and Queue matrices: rows keyed by a service's route
// table, kinds of SAS that say what each letter should do to a row, and a runner that sends every
// letter of a kind to every row (16 requests in flight), giving each allowed attempt a fresh
// fixture (it changes it) and each refused one a shared fixture (it must change nothing).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RawResponse } from './http.js';
import type { SasRequest } from './blob-sas.js';

export interface MatrixRow<F, K extends string> {
  /** `${method} ${resource} ${operation}` of the route it exercises. */
  readonly route: string;
  /** Several rows may exercise one route (a Put Blob of a new blob, and over an existing one). */
  readonly label?: string;
  readonly fixture: K;
  request(fixture: F): SasRequest;
  /** The status an allowed request answers (default: any 2xx). */
  readonly allowedStatus?: number;
  /** Letters of which any one lets a service SAS do it; undefined: no service SAS may (create-service-sas). */
  readonly service?: string;
  /** The resource type and the letters of which any one lets an account SAS do it (create-account-sas). */
  readonly account: { readonly srt: 's' | 'c' | 'o'; readonly letters: string };
}

export interface SasKind<F> {
  readonly name: string;
  readonly letters: string;
  sas(letter: string, fixture: F): string;
  /** The status an allowed attempt answers (200: any 2xx), or the error code of a refused one. */
  expect(row: MatrixRow<F, string>, letter: string): number | string;
}

/**
 * A service SAS signs its resource: on a resource above the one it signs (the service; a container
 * for a blob SAS) the signature names another resource than the request's, and fails (403
 * AuthenticationFailed). Otherwise its letters decide.
 */
export function serviceExpectation(row: MatrixRow<unknown, string>, letter: string, signatureFails: boolean) {
  if (signatureFails) return 'AuthenticationFailed';
  if (row.service !== undefined && row.service.includes(letter)) return row.allowedStatus ?? 200;
  return 'AuthorizationPermissionMismatch';
}

/** An account SAS (create-account-sas) with one resource type: a row of another type is refused first. */
export function accountKind<F>(
  srt: 's' | 'c' | 'o',
  letters: string,
  sas: (srt: string, sp: string) => string,
): SasKind<F> {
  return {
    name: `account SAS srt=${srt}`,
    letters,
    sas: (letter) => sas(srt, letter),
    expect(row, letter) {
      if (row.account.srt !== srt) return 'AuthorizationResourceTypeMismatch';
      if (row.account.letters.includes(letter)) return row.allowedStatus ?? 200;
      return 'AuthorizationPermissionMismatch';
    },
  };
}

/**
 * Each route as its rows name it: `METHOD resource Operation`, and for routes that share those three
 * (one operation whose SAS letter depends on the request), ` [predicate]` after it, the name of the
 * route's `when` (`otherwise` for the one without).
 */
export function routeKeys(
  routes: readonly {
    readonly method: string;
    readonly resource: string;
    readonly operation: string;
    readonly when?: ((request: never) => boolean) | undefined;
  }[],
): string[] {
  const plain = routes.map((r) => `${r.method} ${r.resource} ${r.operation}`);
  return routes.map((r, i) =>
    plain.indexOf(plain[i]!) === plain.lastIndexOf(plain[i]!) ? plain[i]! : `${plain[i]} [${r.when?.name || 'otherwise'}]`,
  );
}

/** Fails unless the rows and the route table name the same routes, each route once. */
export function assertRowsCoverRoutes(routes: readonly string[], rows: readonly { readonly route: string }[]): void {
  assert.equal(new Set(routes).size, routes.length, 'two routes share method, resource and operation');
  const covered = new Set(rows.map((row) => row.route));
  const missing = routes.filter((route) => !covered.has(route));
  assert.deepEqual(missing, [], `routes without a row in the SAS matrix: ${missing.join(', ')}`);
  const stale = [...covered].filter((route) => !routes.includes(route));
  assert.deepEqual(stale, [], `rows for routes that no longer exist: ${stale.join(', ')}`);
}

export interface Matrix<F, K extends string> {
  readonly rows: readonly MatrixRow<F, K>[];
  /** A fresh fixture of this kind. */
  make(kind: K): Promise<F>;
  /** The fixture refused attempts share (made once). */
  shared(kind: K): F;
  send(request: SasRequest, sas: string | undefined): Promise<RawResponse>;
}

/** A running server as a matrix uses it. */
export interface MatrixServer<F, K extends string> {
  make(kind: K): Promise<F>;
  send(request: SasRequest, sas: string | undefined): Promise<RawResponse>;
  stop(): Promise<void>;
}

/**
 * A matrix's tests, inside its describe(): one server from `start`, the shared fixtures made once,
 * then the check that every route has a row, every row with the account key, and each kind of SAS.
 */
export function matrixTests<F, K extends string>(spec: {
  readonly service: string;
  readonly routes: readonly { readonly method: string; readonly resource: string; readonly operation: string }[];
  readonly rows: readonly MatrixRow<F, K>[];
  readonly kinds: readonly SasKind<F>[];
  start(): Promise<MatrixServer<F, K>>;
}): void {
  let server: MatrixServer<F, K> | undefined;
  const shared = new Map<K, F>();
  const matrix: Matrix<F, K> = {
    rows: spec.rows,
    make: (kind) => server!.make(kind),
    shared: (kind) => shared.get(kind)!,
    send: (request, sas) => server!.send(request, sas),
  };
  before(async () => {
    server = await spec.start();
    for (const kind of new Set(spec.rows.map((row) => row.fixture))) shared.set(kind, await server.make(kind));
  });
  after(() => server?.stop());
  test(`every route of the ${spec.service} service has a row (a new route must be added with its expectations)`, () => {
    assertRowsCoverRoutes(routeKeys(spec.routes), spec.rows);
  });
  test('every row succeeds with the account key (the requests are right)', () => runWithKey(matrix));
  for (const kind of spec.kinds) {
    const title = `${kind.name}: each of ${kind.letters.length} letters on ${spec.rows.length} rows`;
    test(title, () => runKind(matrix, kind));
  }
}

/** Every row with the account key: the requests themselves are right. */
export async function runWithKey<F, K extends string>(matrix: Matrix<F, K>): Promise<void> {
  await pool(matrix.rows, async (row) => {
    const res = await matrix.send(row.request(await matrix.make(row.fixture)), undefined);
    assertAllowed(res, row.allowedStatus, `${describeRow(row)} with Shared Key`);
  });
}

/** Every letter of `kind` on every row; fails listing each attempt whose answer is not the expected one. */
export async function runKind<F, K extends string>(matrix: Matrix<F, K>, kind: SasKind<F>): Promise<void> {
  const attempts = matrix.rows.flatMap((row) => [...kind.letters].map((letter) => ({ row, letter })));
  const failures: string[] = [];
  await pool(attempts, async ({ row, letter }) => {
    const expected = kind.expect(row, letter);
    const fixture = typeof expected === 'number' ? await matrix.make(row.fixture) : matrix.shared(row.fixture);
    const res = await matrix.send(row.request(fixture), kind.sas(letter, fixture));
    const what = `${describeRow(row)} with ${kind.name} sp=${letter}`;
    try {
      if (typeof expected === 'number') assertAllowed(res, expected === 200 ? undefined : expected, what);
      else assertRefusedWith(res, expected, what);
    } catch (error) {
      failures.push((error as Error).message.split('\n')[0]!);
    }
  });
  assert.deepEqual(failures, []);
}

function describeRow(row: MatrixRow<unknown, string>): string {
  return row.label === undefined ? row.route : `${row.route} (${row.label})`;
}

function assertAllowed(res: RawResponse, status: number | undefined, what: string): void {
  const good = status === undefined ? res.status >= 200 && res.status < 300 : res.status === status;
  assert.ok(good, `${what}: expected ${status ?? '2xx'}, got ${res.status} ${res.headers['x-ms-error-code'] ?? ''}`);
}

function assertRefusedWith(res: RawResponse, code: string, what: string): void {
  const got = res.headers['x-ms-error-code'];
  assert.ok(res.status === 403 && got === code, `${what}: expected 403 ${code}, got ${res.status} ${got ?? ''}`);
}

/** Runs `work` over `items`, 16 at a time. */
async function pool<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}
