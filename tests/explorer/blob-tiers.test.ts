// The explorer's access tiers in a real Chromium against a real server process: the folder's Tier
// column (inferred, set, rehydrating) and the "Set tier" card of the selected blob. Rehydration
// takes an hour here (--blob-rehydrate-delay), so the archived blob stays "Archive → hot".
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { BlobServiceClient, StorageSharedKeyCredential, type ContainerClient } from '@azure/storage-blob';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { openExplorer } from '../helpers/explorer.js';
import { devAccount, devKey, startServer, type RunningServer } from '../helpers/server.js';

describe('explorer in Chromium: blob access tiers', { skip: browserSkip() }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let container: ContainerClient;
  const pageErrors: string[] = [];
  const tierCell = (name: string): string => `#blobs tr[data-blob="${name}"] td.blob-tier`;

  before(async () => {
    const args = ['--blob-rehydrate-delay', String(60 * 60 * 1000)];
    [server, browser] = await Promise.all([startServer({ args }), launchBrowser()]);
    assert.ok(server.blobUrl, 'the server printed no blob endpoint');
    const credential = new StorageSharedKeyCredential(devAccount, devKey);
    container = new BlobServiceClient(server.blobUrl, credential).getContainerClient('tiers');
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(browserTimeoutMs);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await openExplorer(page, server);
    await page.click('#service-blobs');
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('the Tier column: inferred, set, none for append blobs', async () => {
    await page.fill('#new-container', 'tiers');
    await page.click('#create-container');
    await page.waitForSelector('[data-container-view="tiers"] #blobs td:has-text("No blobs here.")');
    await container.getBlockBlobClient('plain.txt').upload('hello', 5);
    await container.getBlockBlobClient('cool.txt').upload('cool', 4, { tier: 'Cool' });
    await container.getAppendBlobClient('log.txt').create();
    await page.click('#blobs-refresh');
    await page.waitForSelector(tierCell('plain.txt'));
    assert.equal(await page.textContent(tierCell('plain.txt')), 'Hot (inferred)');
    assert.equal(await page.textContent(tierCell('cool.txt')), 'Cool');
    assert.equal(await page.textContent(tierCell('log.txt')), '');
  });

  test('Set tier on the selected blob; archiving, then rehydrating', async () => {
    await page.click('#blobs tr[data-blob="plain.txt"] .blob-properties');
    await page.waitForSelector('#blob-tier-set');
    await page.selectOption('#blob-tier', 'Archive');
    await page.click('#blob-tier-set');
    await page.waitForSelector('#status:has-text("plain.txt: tier set to Archive.")');
    await page.waitForSelector(`${tierCell('plain.txt')}:has-text("Archive")`);
    assert.equal((await container.getBlobClient('plain.txt').getProperties()).accessTier, 'Archive');
    await page.waitForSelector('#blob-headers th:has-text("x-ms-access-tier")');
    await page.selectOption('#blob-tier', 'Hot');
    await page.click('#blob-tier-set');
    await page.waitForSelector('#status:has-text("plain.txt: rehydrating to Hot.")');
    await page.waitForSelector(`${tierCell('plain.txt')}:has-text("Archive → hot")`);
    const properties = await container.getBlobClient('plain.txt').getProperties();
    assert.equal(properties.archiveStatus, 'rehydrate-pending-to-hot');
  });

  test('an append blob has no tier to set: the service says so', async () => {
    await page.click('#blobs tr[data-blob="log.txt"] .blob-properties');
    await page.waitForSelector('#blob-details h3:has-text("log.txt")');
    await page.selectOption('#blob-tier', 'Cool');
    await page.click('#blob-tier-set');
    await page.waitForSelector('#status.error:has-text("InvalidBlobType")');
  });

  test('no errors on the page', () => {
    assert.deepEqual(pageErrors, []);
  });
});
