// SAS on the Blob service through raw HTTP against a real server: what a copy may read
// (https://learn.microsoft.com/rest/api/storageservices/copy-blob, "Authorization"), Create that
// may not overwrite (create-account-sas), and the codes and texts of refused SAS on the Blob and
// Queue services (the services' replies as the official SDKs' recorded tests read them). The full
// permission matrix is blob-sas-matrix.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { accountSas, blobRequest, blobSas, blobUrl, isoSeconds, type SasRequest } from '../../helpers/blob-sas.js';
import { uniqueContainerName } from '../../helpers/blob.js';
import { describeResponse, hmacBase64, send, type RawResponse } from '../../helpers/http.js';
import { queueEndpoint, queueSend, uniqueQueueName } from '../../helpers/queue.js';
import { devAccount, devKey, serverEngines, startServer, type RunningServer } from '../../helpers/server.js';

const minute = 60_000;

function assertRefused(res: RawResponse, status: number, code: string): void {
  assert.equal(res.status, status, describeResponse(res));
  assert.equal(res.headers['x-ms-error-code'], code, describeResponse(res));
}

for (const engine of serverEngines) {
  describe(`Blob SAS (${engine.label})`, () => {
    let server: RunningServer;
    const key = (request: SasRequest) => blobRequest(server, request, undefined);
    const withSas = (request: SasRequest, sas: string) => blobRequest(server, request, sas);

    async function container(access?: 'blob' | 'container'): Promise<string> {
      const name = uniqueContainerName('s');
      const headers = access === undefined ? undefined : { 'x-ms-blob-public-access': access };
      const res = await key({ method: 'PUT', target: `${name}?restype=container`, ...(headers && { headers }) });
      assert.equal(res.status, 201, describeResponse(res));
      return name;
    }

    async function putBlob(name: string, blob: string, content: string): Promise<void> {
      const res = await key({
        method: 'PUT',
        target: `${name}/${blob}`,
        headers: { 'x-ms-blob-type': 'BlockBlob' },
        body: content,
      });
      assert.equal(res.status, 201, describeResponse(res));
    }

    const copy = (destination: string, source: string): SasRequest => ({
      method: 'PUT',
      target: destination,
      headers: { 'x-ms-copy-source': source },
    });

    before(async () => {
      server = await startServer(engine.options);
    });

    after(async () => {
      await server?.stop();
    });

    describe('Copy Blob reads its source only as the request may', () => {
      let a: string;
      let b: string;
      before(async () => {
        a = await container();
        b = await container();
        await putBlob(b, 'secret', 'private bytes of B');
        await putBlob(a, 'own', 'bytes of A');
      });

      test("a container SAS for A cannot copy B's blob into A: 403 CannotVerifyCopySource, nothing written", async () => {
        const sas = blobSas({ sr: 'c', resource: a, sp: 'rcw' });
        const res = await withSas(copy(`${a}/loot`, blobUrl(server, b, 'secret')), sas);
        assertRefused(res, 403, 'CannotVerifyCopySource');
        assert.equal((await withSas({ method: 'GET', target: `${a}/loot` }, sas)).status, 404);
      });

      test('the same container SAS copies a blob of its own container', async () => {
        const sas = blobSas({ sr: 'c', resource: a, sp: 'rcw' });
        assert.equal((await withSas(copy(`${a}/copy-of-own`, blobUrl(server, a, 'own')), sas)).status, 202);
        assert.equal((await withSas({ method: 'GET', target: `${a}/copy-of-own` }, sas)).text, 'bytes of A');
      });

      test('a container SAS without Read, or a blob SAS for the destination, cannot read the source', async () => {
        const writeOnly = blobSas({ sr: 'c', resource: a, sp: 'cw' });
        assertRefused(
          await withSas(copy(`${a}/x1`, blobUrl(server, a, 'own')), writeOnly),
          403,
          'CannotVerifyCopySource',
        );
        const blobOnly = blobSas({ sr: 'b', resource: `${a}/x2`, sp: 'rcw' });
        assertRefused(
          await withSas(copy(`${a}/x2`, blobUrl(server, a, 'own')), blobOnly),
          403,
          'CannotVerifyCopySource',
        );
      });

      test('an account SAS needs Read on objects to copy: with only c (or w) it is refused', async () => {
        for (const sp of ['c', 'w', 'cw']) {
          const res = await withSas(
            copy(`${a}/acct-${sp}`, blobUrl(server, b, 'secret')),
            accountSas({ srt: 'o', sp }),
          );
          assertRefused(res, 403, 'CannotVerifyCopySource');
        }
        const res = await withSas(
          copy(`${a}/acct-rc`, blobUrl(server, b, 'secret')),
          accountSas({ srt: 'o', sp: 'rc' }),
        );
        assert.equal(res.status, 202, describeResponse(res));
      });

      test('a SAS in the source URL that grants Read lets the copy read it, checked like a request SAS', async () => {
        const destination = blobSas({ sr: 'c', resource: a, sp: 'cw' });
        const good = blobSas({ sr: 'b', resource: `${b}/secret`, sp: 'r' });
        assert.equal(
          (await withSas(copy(`${a}/via-sas`, blobUrl(server, b, 'secret', good)), destination)).status,
          202,
        );
        assert.equal((await key({ method: 'GET', target: `${a}/via-sas` })).text, 'private bytes of B');
        const refusals: [string, string][] = [
          ['expired', blobSas({ sr: 'b', resource: `${b}/secret`, sp: 'r', se: isoSeconds(Date.now() - minute) })],
          ['without Read', blobSas({ sr: 'b', resource: `${b}/secret`, sp: 'w' })],
          ['for another blob', blobSas({ sr: 'b', resource: `${b}/other`, sp: 'r' })],
          [
            'badly signed',
            blobSas({ sr: 'b', resource: `${b}/secret`, sp: 'r' }, Buffer.from('not the key').toString('base64')),
          ],
          ['an account SAS for objects without Read', accountSas({ srt: 'o', sp: 'w' })],
          ['an account SAS for containers only', accountSas({ srt: 'c', sp: 'r' })],
        ];
        for (const [what, sas] of refusals) {
          const res = await withSas(copy(`${a}/refused`, blobUrl(server, b, 'secret', sas)), destination);
          assert.equal(res.headers['x-ms-error-code'], 'CannotVerifyCopySource', `${what}: ${describeResponse(res)}`);
          assert.equal(res.status, 403, what);
        }
        assert.equal((await key({ method: 'HEAD', target: `${a}/refused` })).status, 404);
      });

      test('a source in a public container is readable by any request', async () => {
        const open = await container('blob');
        await putBlob(open, 'public', 'anyone may read this');
        const destination = blobSas({ sr: 'c', resource: a, sp: 'cw' });
        assert.equal(
          (await withSas(copy(`${a}/from-public`, blobUrl(server, open, 'public')), destination)).status,
          202,
        );
      });

      test('Shared Key reads any source of the account', async () => {
        assert.equal((await key(copy(`${a}/by-key`, blobUrl(server, b, 'secret')))).status, 202);
      });

      test('a source the request may not read is refused whether or not it exists', async () => {
        const sas = blobSas({ sr: 'c', resource: a, sp: 'rcw' });
        assertRefused(
          await withSas(copy(`${a}/nothing`, blobUrl(server, b, 'no-such-blob')), sas),
          403,
          'CannotVerifyCopySource',
        );
        assertRefused(
          await key(copy(`${a}/nothing`, blobUrl(server, b, 'no-such-blob'))),
          404,
          'CannotVerifyCopySource',
        );
      });
    });

    describe('Create (c) writes new blobs and never replaces one', () => {
      for (const [kind, sasFor] of [
        ['account SAS ss=b&srt=o&sp=c', () => accountSas({ srt: 'o', sp: 'c' })],
        ['container SAS sp=c', (name: string) => blobSas({ sr: 'c', resource: name, sp: 'c' })],
      ] as const) {
        test(`${kind}: Put Blob, Copy Blob, Put Block List create; over an existing blob 403, content kept`, async () => {
          const name = await container();
          await putBlob(name, 'src', 'source');
          const sas = sasFor(name);
          const put = (blob: string, body: string): SasRequest => ({
            method: 'PUT',
            target: `${name}/${blob}`,
            headers: { 'x-ms-blob-type': 'BlockBlob' },
            body,
          });
          assert.equal((await withSas(put('new', 'first'), sas)).status, 201);
          assertRefused(await withSas(put('new', 'second'), sas), 403, 'AuthorizationPermissionMismatch');
          const sourceSas = blobSas({ sr: 'b', resource: `${name}/src`, sp: 'r' });
          const source = blobUrl(server, name, 'src', sourceSas);
          assertRefused(await withSas(copy(`${name}/new`, source), sas), 403, 'AuthorizationPermissionMismatch');
          assert.equal((await withSas(copy(`${name}/copied`, source), sas)).status, 202);
          const list = '<?xml version="1.0" encoding="utf-8"?><BlockList></BlockList>';
          const commit = { method: 'PUT', target: `${name}/new?comp=blocklist`, body: list };
          assertRefused(await withSas(commit, sas), 403, 'AuthorizationPermissionMismatch');
          const block = { method: 'PUT', target: `${name}/new?comp=block&blockid=YmxvY2s%3D`, body: 'x' };
          assertRefused(await withSas(block, sas), 403, 'AuthorizationPermissionMismatch');
          assert.equal((await key({ method: 'GET', target: `${name}/new` })).text, 'first');
          // A snapshot is a new object: Create makes it (create-service-sas: "snapshot a blob").
          assert.equal((await withSas({ method: 'PUT', target: `${name}/new?comp=snapshot` }, sas)).status, 201);
        });
      }
    });

    describe('Lease Container is a container operation', () => {
      test('account SAS srt=c&sp=w leases a container; srt=o&sp=w and a container SAS cannot', async () => {
        const name = await container();
        const lease = {
          method: 'PUT',
          target: `${name}?restype=container&comp=lease`,
          headers: { 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '15' },
        };
        assertRefused(
          await withSas(lease, accountSas({ srt: 'o', sp: 'w' })),
          403,
          'AuthorizationResourceTypeMismatch',
        );
        assertRefused(
          await withSas(lease, blobSas({ sr: 'c', resource: name, sp: 'racwdl' })),
          403,
          'AuthorizationPermissionMismatch',
        );
        assert.equal((await withSas(lease, accountSas({ srt: 'c', sp: 'w' }))).status, 201);
      });
    });

    describe('Delete breaks a blob lease from signed version 2017-07-29', () => {
      test('sp=d breaks with sv 2021-08-06; not with sv 2017-04-17', async () => {
        const name = await container();
        await putBlob(name, 'b', 'x');
        const acquire = { 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '-1' };
        assert.equal((await key({ method: 'PUT', target: `${name}/b?comp=lease`, headers: acquire })).status, 201);
        const breakIt = { method: 'PUT', target: `${name}/b?comp=lease`, headers: { 'x-ms-lease-action': 'break' } };
        const old = blobSas({ sr: 'b', resource: `${name}/b`, sp: 'd', sv: '2017-04-17' });
        assertRefused(await withSas(breakIt, old), 403, 'AuthorizationPermissionMismatch');
        assert.equal((await withSas(breakIt, blobSas({ sr: 'b', resource: `${name}/b`, sp: 'd' }))).status, 202);
      });
    });

    describe('refused SAS: the code and text the service gives each refusal', () => {
      let name: string;
      before(async () => {
        name = await container();
        await putBlob(name, 'b', 'x');
      });
      const get = (sas: string) => withSas({ method: 'GET', target: `${name}/b` }, sas);

      test('expired, without a start: 403 AuthenticationFailed, "Signed expiry time [...] must be after signed start time [...]"', async () => {
        const se = isoSeconds(Date.now() - 10 * minute);
        for (const sas of [
          blobSas({ sr: 'b', resource: `${name}/b`, sp: 'r', se }),
          accountSas({ srt: 'o', sp: 'r', se }),
        ]) {
          const res = await get(sas);
          assertRefused(res, 403, 'AuthenticationFailed');
          const detail = /<AuthenticationErrorDetail>([^<]*)<\/AuthenticationErrorDetail>/.exec(res.text)?.[1] ?? '';
          const expected = `Signed expiry time [${new Date(se).toUTCString()}] must be after signed start time [`;
          assert.ok(detail.startsWith(expected), detail);
        }
      });

      test('a minute past expiry is expired: no clock skew allowance', async () => {
        assertRefused(
          await get(blobSas({ sr: 'b', resource: `${name}/b`, sp: 'r', se: isoSeconds(Date.now() - minute) })),
          403,
          'AuthenticationFailed',
        );
      });

      test('not yet valid: 403 AuthenticationFailed, "Signature not valid in the specified time frame: ..."', async () => {
        const st = isoSeconds(Date.now() + 10 * minute);
        const res = await get(blobSas({ sr: 'b', resource: `${name}/b`, sp: 'r', st }));
        assertRefused(res, 403, 'AuthenticationFailed');
        assert.match(
          res.text,
          /<AuthenticationErrorDetail>Signature not valid in the specified time frame: Start \[[^\]]+\] - Expiry \[[^\]]+\] - Current \[[^\]]+\]<\/AuthenticationErrorDetail>/,
        );
      });

      test('each other refusal keeps its documented code (common-rest-api-error-codes)', async () => {
        const cases: [string, string][] = [
          [blobSas({ sr: 'b', resource: `${name}/b`, sp: 'w' }), 'AuthorizationPermissionMismatch'],
          [accountSas({ srt: 'c', sp: 'r' }), 'AuthorizationResourceTypeMismatch'],
          [accountSas({ ss: 'q', srt: 'o', sp: 'r' }), 'AuthorizationServiceMismatch'],
          [blobSas({ sr: 'b', resource: `${name}/b`, sp: 'r', sip: '10.1.2.3' }), 'AuthorizationSourceIPMismatch'],
          [blobSas({ sr: 'b', resource: `${name}/b`, sp: 'r', spr: 'https' }), 'AuthorizationProtocolMismatch'],
        ];
        for (const [sas, code] of cases) assertRefused(await get(sas), 403, code);
      });

      test('the Queue service answers an expired account SAS the same way', async () => {
        const queue = uniqueQueueName();
        assert.equal((await queueSend(server, { method: 'PUT', target: queue })).status, 201);
        const se = isoSeconds(Date.now() - 10 * minute);
        const fields = [devAccount, 'r', 'q', 'o', '', se, '', '', '2021-08-06', '', ''];
        const sig = hmacBase64(devKey, fields.join('\n'));
        const query = `sv=2021-08-06&ss=q&srt=o&sp=r&se=${encodeURIComponent(se)}&sig=${encodeURIComponent(sig)}`;
        const port = Number(new URL(queueEndpoint(server)).port);
        const res = await send(port, {
          method: 'GET',
          path: `/${devAccount}/${queue}/messages?peekonly=true&${query}`,
          headers: { 'x-ms-version': '2021-08-06' },
          auth: 'none',
        });
        assertRefused(res, 403, 'AuthenticationFailed');
        assert.match(
          res.text,
          /<AuthenticationErrorDetail>Signed expiry time \[[^\]]+\] must be after signed start time \[/,
        );
      });
    });
  });
}
