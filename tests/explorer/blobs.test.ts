// The explorer's Blobs view in a real Chromium against a real server process: the page is loaded
// from the table port and calls the blob port (docs/explorer.md "Across the service ports").
// Containers are created and deleted, blobs listed a folder at a time, uploaded in one Put Blob and
// in blocks, downloaded, their properties and metadata read and written, and a SAS URL made.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { BlobServiceClient, StorageSharedKeyCredential, type ContainerClient } from '@azure/storage-blob';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { openExplorer } from '../helpers/explorer.js';
import { devAccount, devKey, startServer, type RunningServer } from '../helpers/server.js';

const screenshotPath = fileURLToPath(new URL('../../../docs/explorer-blobs.png', import.meta.url));

/** The viewport with the main area scrolled to its top: the folder, then the blob's details. */
async function screenshotOfTop(page: Page): Promise<Buffer> {
  await page.evaluate(() => {
    (globalThis as any).document.getElementById('main').scrollTo(0, 0);
    (globalThis as any).scrollTo(0, 0);
  });
  return page.screenshot();
}

describe('explorer in Chromium: blobs', { skip: browserSkip() }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let container: ContainerClient;
  let confirmAnswer = true;
  const pageErrors: string[] = [];
  const blobRow = (name: string): string => `#blobs tr[data-blob="${name}"]`;

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    assert.ok(server.blobUrl, 'the server printed no blob endpoint');
    const credential = new StorageSharedKeyCredential(devAccount, devKey);
    container = new BlobServiceClient(server.blobUrl, credential).getContainerClient('photos');
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    page.setDefaultTimeout(browserTimeoutMs);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('dialog', (dialog) => void (confirmAnswer ? dialog.accept() : dialog.dismiss()));
    await openExplorer(page, server);
    await page.click('#service-blobs');
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('create a container (a bad name is refused with the rule it breaks)', async () => {
    await page.fill('#new-container', 'Bad_Name');
    await page.click('#create-container');
    await page.waitForSelector('#status.error:has-text("only lower-case letters")');
    await page.fill('#new-container', 'photos');
    await page.click('#create-container');
    await page.waitForSelector('[data-container-view="photos"] #blobs td:has-text("No blobs here.")');
    assert.equal(await container.exists(), true);
  });

  test("blobs a folder at a time (delimiter '/'), with a breadcrumb", async () => {
    const text = { blobHTTPHeaders: { blobContentType: 'text/plain' }, metadata: { owner: 'ann' } };
    await container.getBlockBlobClient('2024/a b.txt').upload('hello', 5, text);
    await container.getBlockBlobClient('2024/05/deep.txt').upload('x', 1);
    await container.getBlockBlobClient('top.json').upload('{}', 2);
    await page.click('#blobs-refresh');
    await page.waitForSelector('#blobs tr[data-folder="2024/"]');
    const listed = (kind: string) =>
      page.$$eval(`#blobs tr[data-${kind}]`, (rows) => rows.map((row) => (row as any).dataset));
    assert.deepEqual(
      (await listed('blob')).map((d: any) => d.blob),
      ['top.json'],
    );
    await page.click('#blobs tr[data-folder="2024/"] button');
    await page.waitForSelector(blobRow('2024/a b.txt'));
    assert.deepEqual(
      (await listed('folder')).map((d: any) => d.folder),
      ['2024/05/'],
    );
    assert.ok(await page.$('#blob-path button[data-prefix="2024/"]'));
  });

  test('upload a small file in one Put Blob and a large one in blocks', async () => {
    const small = randomBytes(1000);
    const large = randomBytes(9 * 1024 * 1024 + 123);
    await page.setInputFiles('#upload-file', [
      { name: 'small.bin', mimeType: 'application/octet-stream', buffer: small },
      { name: 'large.bin', mimeType: 'image/png', buffer: large },
    ]);
    await page.waitForSelector('#upload-progress:has-text("uploaded 2 files")');
    await page.waitForSelector(blobRow('2024/large.bin'));
    assert.ok((await container.getBlobClient('2024/large.bin').downloadToBuffer()).equals(large));
    assert.ok((await container.getBlobClient('2024/small.bin').downloadToBuffer()).equals(small));
    assert.equal((await container.getBlobClient('2024/large.bin').getProperties()).contentType, 'image/png');
    const blocks = await container.getBlockBlobClient('2024/large.bin').getBlockList('committed');
    assert.equal(blocks.committedBlocks?.length, 3, 'blocks of 4 MiB');
    const single = await container.getBlockBlobClient('2024/small.bin').getBlockList('committed');
    assert.equal(single.committedBlocks?.length ?? 0, 0, 'one Put Blob leaves no block list');
  });

  test('download', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click(`${blobRow('2024/a b.txt')} .blob-download`),
    ]);
    assert.equal(download.suggestedFilename(), 'a b.txt');
    assert.equal(readFileSync((await download.path())!, 'utf8'), 'hello');
  });

  test('properties and metadata', async () => {
    await page.click(`${blobRow('2024/a b.txt')} .blob-properties`);
    await page.waitForSelector('#blob-headers th:has-text("content-type")');
    const headers = await page.$$eval('#blob-headers tr', (rows) =>
      Object.fromEntries(rows.map((row: any) => [row.cells[0].textContent, row.cells[1].textContent])),
    );
    assert.equal(headers['content-type'], 'text/plain');
    assert.equal(headers['content-length'], '5');
    const metadata = () =>
      page.$$eval('.metadata-row', (rows) =>
        rows.map((row: any) => [row.querySelector('.metadata-name').value, row.querySelector('.metadata-value').value]),
      );
    assert.deepEqual(await metadata(), [['owner', 'ann']]);
    await page.click('#metadata-add');
    await page.fill('.metadata-row:last-child .metadata-name', 'reviewed');
    await page.fill('.metadata-row:last-child .metadata-value', 'yes');
    await page.click('#metadata-save');
    await page.waitForSelector('#status:has-text("Metadata of 2024/a b.txt saved.")');
    const stored = (await container.getBlobClient('2024/a b.txt').getProperties()).metadata;
    assert.deepEqual(stored, { owner: 'ann', reviewed: 'yes' });
    // Times and ETags differ on every run: docs/explorer-blobs.png is rewritten only when asked.
    if (process.env['CERULEAN_UPDATE_SCREENSHOT'] === '1' || !existsSync(screenshotPath))
      writeFileSync(screenshotPath, await screenshotOfTop(page));
  });

  test('a SAS URL for the blob reads it and grants nothing more', async () => {
    await page.click('#blob-sas-generate');
    await page.waitForFunction(() => (globalThis as any).document.getElementById('blob-sas-url').value !== '');
    const url = await page.inputValue('#blob-sas-url');
    const read = await fetch(url);
    assert.equal(read.status, 200);
    assert.equal(await read.text(), 'hello');
    const write = await fetch(url, { method: 'PUT', headers: { 'x-ms-blob-type': 'BlockBlob' }, body: 'x' });
    assert.equal(write.status, 403);
  });

  test('delete a blob and the container, each after asking', async () => {
    confirmAnswer = false;
    await page.click(`${blobRow('2024/small.bin')} .blob-delete`);
    assert.equal(await container.getBlobClient('2024/small.bin').exists(), true);
    confirmAnswer = true;
    await page.click(`${blobRow('2024/small.bin')} .blob-delete`);
    await page.waitForFunction(
      () => !(globalThis as any).document.querySelector('#blobs tr[data-blob="2024/small.bin"]'),
    );
    assert.equal(await container.getBlobClient('2024/small.bin').exists(), false);
    await page.click('#blob-path button[data-prefix=""]');
    await page.waitForSelector(blobRow('top.json'));
    confirmAnswer = false;
    await page.click('#container-list button[aria-label="Delete container photos"]');
    assert.equal(await container.exists(), true);
    confirmAnswer = true;
    await page.click('#container-list button[aria-label="Delete container photos"]');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#container-list li').length === 0);
    assert.equal(await container.exists(), false);
  });

  test('no errors on the page', () => {
    assert.deepEqual(pageErrors, []);
  });
});
