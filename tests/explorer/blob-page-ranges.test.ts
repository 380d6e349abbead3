// The explorer's page blobs in a real Chromium against a real server process: a page blob's details
// show its written page ranges (Get Page Ranges), 100 a page, with the bytes written against its size.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { BlobServiceClient, StorageSharedKeyCredential, type ContainerClient } from '@azure/storage-blob';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { openContainer } from '../helpers/explorer.js';
import { devAccount, devKey, startServer, type RunningServer } from '../helpers/server.js';

const pageBytes = 512;
/** Every other page of the first 300 written: 150 ranges, more than the explorer's 100 a page. */
const writtenPages = 150;
const blobBytes = 256 * 1024;

describe('explorer in Chromium: page ranges of page blobs', { skip: browserSkip() }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let container: ContainerClient;
  const pageErrors: string[] = [];
  const ranges = () =>
    page.$$eval('#page-ranges tr', (rows) =>
      rows.map((row) => [...(row as any).querySelectorAll('td')].map((cell: any) => cell.textContent).join(' ')),
    );

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    assert.ok(server.blobUrl, 'the server printed no blob endpoint');
    const credential = new StorageSharedKeyCredential(devAccount, devKey);
    container = new BlobServiceClient(server.blobUrl, credential).getContainerClient('disks');
    await container.create();
    const disk = container.getPageBlobClient('disk.vhd');
    await disk.create(blobBytes);
    const content = Buffer.alloc(pageBytes, 7);
    for (let i = 0; i < writtenPages; i++) await disk.uploadPages(content, 2 * i * pageBytes, pageBytes);
    await container.getPageBlobClient('empty.vhd').create(blobBytes);
    await container.getBlockBlobClient('notes.txt').upload('n', 1);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(browserTimeoutMs);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await openContainer(page, server, 'disks');
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('a page blob lists its written ranges, 100 a page, and the bytes written of its size', async () => {
    await page.click('#blobs tr[data-blob="disk.vhd"] .blob-properties');
    await page.waitForSelector('#page-ranges tr:nth-child(100)');
    const first = await ranges();
    assert.equal(first.length, 100);
    assert.deepEqual(first.slice(0, 2), ['0 511 512 B', '1024 1535 512 B']);
    assert.equal(
      await page.textContent('#page-ranges-summary'),
      '51,200 B (50 KiB) written in 100 ranges so far (more ranges follow), of 262,144 B (256 KiB).',
    );
    await page.click('#page-ranges-more');
    await page.waitForSelector('#page-ranges tr:nth-child(150)');
    const all = await ranges();
    assert.equal(all.length, writtenPages);
    assert.equal(all.at(-1), `${149 * 2 * pageBytes} ${149 * 2 * pageBytes + 511} 512 B`);
    assert.equal(await page.isHidden('#page-ranges-more'), true);
    assert.equal(
      await page.textContent('#page-ranges-summary'),
      '76,800 B (75 KiB) written in 150 ranges, of 262,144 B (256 KiB).',
    );
  });

  test('a page blob with nothing written; a block blob has no page ranges', async () => {
    await page.click('#blobs tr[data-blob="empty.vhd"] .blob-properties');
    await page.waitForSelector('#blob-details h3:has-text("empty.vhd")');
    await page.waitForSelector('#page-ranges-summary:has-text("0 B written in 0 ranges, of 262,144 B (256 KiB).")');
    await page.click('#blobs tr[data-blob="notes.txt"] .blob-properties');
    await page.waitForSelector('#blob-details h3:has-text("notes.txt")');
    assert.equal(await page.$('#page-ranges-card'), null);
  });

  test('no errors on the page', () => {
    assert.deepEqual(pageErrors, []);
  });
});
