// Who may read /_metrics and /_insights. The system tests run on loopback only (the machine sends
// no traffic elsewhere), so the rule for other addresses is checked here, on answerAdmin itself,
// with requests signed by the real Shared Key code path.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { loadAccounts } from '../../src/http/accounts.js';
import { answerAdmin, type AdminOptions } from '../../src/observe/admin.js';
import { splitRequestTarget } from '../../src/http/account-target.js';
import { StorageError } from '../../src/errors.js';
import { hmacBase64, stringToSign } from '../helpers/http.js';
import { devAccount, devKey } from '../helpers/server.js';

const accounts = loadAccounts(undefined);

function options(metricsPublic: boolean): AdminOptions {
  return {
    accounts,
    metricsPublic,
    metrics: async () => ({ contentType: 'text/plain', text: 'cerulean_up 1\n' }),
    insights: { report: async () => ({ findings: [] }), reset: () => undefined },
    faults: { describe: () => ({ rules: [] }), replace: () => undefined, clear: () => undefined },
  };
}

function request(path: string, remoteAddress: string, key?: string): IncomingMessage {
  const date = new Date().toUTCString();
  const headers: Record<string, string> = { 'x-ms-date': date };
  if (key !== undefined) {
    const signature = hmacBase64(
      key,
      stringToSign('SharedKeyLite', {
        verb: 'GET',
        contentMd5: '',
        contentType: '',
        date,
        resource: `/${devAccount}${path}`,
      }),
    );
    headers['authorization'] = `SharedKeyLite ${devAccount}:${signature}`;
  }
  return { method: 'GET', url: path, headers, socket: { remoteAddress } } as unknown as IncomingMessage;
}

async function status(
  path: string,
  remoteAddress: string,
  key?: string,
  metricsPublic = false,
): Promise<number | string> {
  try {
    return (await answerAdmin(request(path, remoteAddress, key), splitRequestTarget(path), options(metricsPublic)))
      .status;
  } catch (error) {
    return (error as StorageError).code;
  }
}

describe('access to /_metrics and /_insights', () => {
  test('loopback reads without credentials', async () => {
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1'])
      assert.equal(await status('/_metrics', address), 200, address);
  });

  test('another address needs an account key, unless --metrics-public', async () => {
    for (const path of ['/_metrics', '/_insights']) {
      assert.equal(await status(path, '10.1.2.3'), 'AuthenticationFailed');
      assert.equal(await status(path, '10.1.2.3', Buffer.alloc(64, 7).toString('base64')), 'AuthenticationFailed');
      assert.equal(await status(path, '10.1.2.3', devKey), 200);
      assert.equal(await status(path, '::ffff:192.168.1.9', undefined, true), 200);
    }
  });

  test('/_faults needs the key even from loopback', async () => {
    assert.equal(await status('/_faults', '127.0.0.1'), 'AuthenticationFailed');
    assert.equal(await status('/_faults', '127.0.0.1', devKey), 200);
  });
});
