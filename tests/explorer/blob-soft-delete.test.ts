// The explorer's soft-deleted blobs in a real Chromium against a real server process: with a delete
// retention policy set through the SDK, "Show deleted" lists a deleted blob (List Blobs
// include=deleted) marked with its deletion time and days left, and "Undelete" restores it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { BlobServiceClient, StorageSharedKeyCredential, type ContainerClient } from '@azure/storage-blob';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { openContainer } from '../helpers/explorer.js';
import { devAccount, devKey, startServer, type RunningServer } from '../helpers/server.js';

describe('explorer in Chromium: soft-deleted blobs', { skip: browserSkip() }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let container: ContainerClient;
  const pageErrors: string[] = [];
  const deletedRow = '#blobs tr[data-blob="gone.txt"][data-deleted]';
  const liveRow = '#blobs tr[data-blob="gone.txt"]:not([data-deleted])';

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    assert.ok(server.blobUrl, 'the server printed no blob endpoint');
    const service = new BlobServiceClient(server.blobUrl, new StorageSharedKeyCredential(devAccount, devKey));
    await service.setProperties({ deleteRetentionPolicy: { enabled: true, days: 7 } });
    container = service.getContainerClient('bin');
    await container.create();
    await container.getBlockBlobClient('kept.txt').upload('kept', 4);
    await container.getBlockBlobClient('gone.txt').upload('gone!', 5);
    await container.getBlobClient('gone.txt').delete();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(browserTimeoutMs);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await openContainer(page, server, 'bin');
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('a deleted blob is not listed until "Show deleted" is ticked, then marked with its time and days left', async () => {
    await page.waitForSelector('#blobs tr[data-blob="kept.txt"]');
    assert.equal(await page.$('#blobs tr[data-blob="gone.txt"]'), null);
    await page.check('#show-deleted');
    await page.waitForSelector(deletedRow);
    assert.match((await page.textContent(`${deletedRow} .blob-deleted`))!, /^deleted .+, 7 days left$/);
    assert.equal(await page.$(liveRow), null);
    assert.equal(await page.$(`${deletedRow} .blob-download`), null);
    assert.ok(await page.$('#blobs tr[data-blob="kept.txt"]:not([data-deleted])'));
  });

  test('Undelete restores it: listed again as a live blob, readable through the SDK', async () => {
    await page.click(`${deletedRow} .blob-undelete`);
    await page.waitForSelector('#status:has-text("Blob gone.txt undeleted.")');
    await page.waitForSelector(liveRow);
    assert.equal(await page.$(deletedRow), null);
    assert.equal((await container.getBlobClient('gone.txt').downloadToBuffer()).toString(), 'gone!');
    await page.uncheck('#show-deleted');
    await page.waitForSelector(liveRow);
  });

  test('a name written again after its delete is listed twice: the live blob and the deleted one', async () => {
    await page.check('#show-deleted');
    await container.getBlobClient('gone.txt').delete();
    await container.getBlockBlobClient('gone.txt').upload('new', 3);
    await page.click('#blobs-refresh');
    await page.waitForSelector(deletedRow);
    await page.waitForSelector(liveRow);
    assert.equal(await page.textContent(`${liveRow} td.number`), '3 B');
    assert.equal(await page.textContent(`${deletedRow} td.number`), '5 B');
    await page.uncheck('#show-deleted');
    await page.waitForSelector(deletedRow, { state: 'detached' });
  });

  test("a refused undelete shows the service's error", async () => {
    await container.getBlobClient('gone.txt').delete();
    await page.check('#show-deleted');
    await page.waitForSelector(deletedRow);
    // The container is deleted behind the page's back: the service refuses the undelete.
    await container.delete();
    await page.click(`${deletedRow} .blob-undelete`);
    await page.waitForSelector('#status.error:has-text("ContainerNotFound")');
  });

  test('no errors on the page', () => {
    assert.deepEqual(pageErrors, []);
  });
});
