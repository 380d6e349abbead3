// The explorer's "Deleted & retention" view in a real Chromium against a real server process
// (--container-soft-delete-days 7), on each engine: it shows the account's blob DeleteRetentionPolicy
// and sets it (Set Blob Service Properties: days and enabled, read back through the SDK), lists a
// deleted container (List Containers include=deleted) with its days left, and "Restore" brings it
// back (Restore Container), its blob readable and the container listed in the pane again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { storeEngines } from '../helpers/blob-store-check.js';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { openExplorer } from '../helpers/explorer.js';
import { devAccount, devKey, startServer, type RunningServer } from '../helpers/server.js';

for (const engine of storeEngines) {
  describe(`explorer in Chromium: deleted containers and retention on ${engine.label}`, { skip: browserSkip() }, () => {
    let data: Awaited<ReturnType<typeof engine.data>>;
    let server: RunningServer;
    let browser: Browser;
    let page: Page;
    let service: BlobServiceClient;
    const pageErrors: string[] = [];
    const deletedRow = '#deleted-containers tr[data-deleted-container="trash"]';

    before(async () => {
      data = await engine.data();
      const args = ['--container-soft-delete-days', '7'];
      [server, browser] = await Promise.all([startServer({ ...data.options, args }), launchBrowser()]);
      assert.ok(server.blobUrl, 'the server printed no blob endpoint');
      service = new BlobServiceClient(server.blobUrl, new StorageSharedKeyCredential(devAccount, devKey));
      const container = service.getContainerClient('trash');
      await container.create();
      await container.getBlockBlobClient('kept.txt').upload('kept', 4);
      await container.delete();
      page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      page.setDefaultTimeout(browserTimeoutMs);
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await openExplorer(page, server);
      await page.click('#service-blobs');
      await page.click('#blob-retention-open');
      await page.waitForSelector('#main[data-policy-loaded]');
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
      await data?.cleanup();
    });

    test('the blob delete retention policy is shown and set: enabled with days, then off', async () => {
      assert.equal(await page.isChecked('#retention-enabled'), false);
      await page.check('#retention-enabled');
      await page.fill('#retention-days', '400');
      await page.click('#retention-save');
      await page.waitForSelector('#status.error:has-text("1 to 365")');
      await page.fill('#retention-days', '5');
      await page.click('#retention-save');
      await page.waitForSelector('#status:has-text("kept 5 days")');
      const policy = (await service.getProperties()).deleteRetentionPolicy;
      assert.deepEqual([policy?.enabled, policy?.days], [true, 5]);
      await page.click('#blob-retention-open');
      await page.waitForSelector('#main[data-policy-loaded]');
      assert.equal(await page.isChecked('#retention-enabled'), true);
      assert.equal(await page.inputValue('#retention-days'), '5');
      await page.uncheck('#retention-enabled');
      await page.click('#retention-save');
      await page.waitForSelector('#status:has-text("no longer kept")');
      assert.equal((await service.getProperties()).deleteRetentionPolicy?.enabled, false);
    });

    test('a deleted container is listed with its days left; Restore brings it back', async () => {
      await page.waitForSelector(deletedRow);
      assert.equal(await page.textContent(`${deletedRow} td.number`), '7');
      assert.equal(await page.$('#container-list .table-link[data-container="trash"]'), null);
      await page.click(`${deletedRow} .container-restore`);
      await page.waitForSelector('#status:has-text("Container trash restored.")');
      await page.waitForSelector(deletedRow, { state: 'detached' });
      await page.waitForSelector('#container-list .table-link[data-container="trash"]');
      const text = await service.getContainerClient('trash').getBlobClient('kept.txt').downloadToBuffer();
      assert.equal(text.toString(), 'kept');
    });

    test("a refused restore shows the service's error", async () => {
      const container = service.getContainerClient('trash');
      await container.delete();
      await page.click('#blob-retention-open');
      await page.waitForSelector(deletedRow);
      // The name is taken behind the page's back: the service refuses the restore.
      await container.create();
      await page.click(`${deletedRow} .container-restore`);
      await page.waitForSelector('#status.error:has-text("ContainerAlreadyExists")');
    });

    test('no errors on the page', () => {
      assert.deepEqual(pageErrors, []);
    });
  });
}
