// The explorer's blob versions in a real Chromium against a real server process run with
// --blob-versioning: the selected blob's "Versions" card lists them (List Blobs include=versions),
// downloads one (?versionid=), restores one (Copy Blob from the version's URL) and deletes one.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { BlobServiceClient, StorageSharedKeyCredential, type ContainerClient } from '@azure/storage-blob';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { openContainer } from '../helpers/explorer.js';
import { devAccount, devKey, startServer, type RunningServer } from '../helpers/server.js';

describe('explorer in Chromium: blob versions', { skip: browserSkip() }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let container: ContainerClient;
  let confirmAnswer = true;
  const pageErrors: string[] = [];
  const ids: string[] = [];
  const versionRow = (id: string) => `#blob-versions tr[data-version="${id}"]`;
  const listedVersions = () =>
    page.$$eval('#blob-versions tr[data-version]', (rows) =>
      rows.map((row) => `${(row as any).dataset.version}${(row as any).dataset.current === 'true' ? ' current' : ''}`),
    );
  const text = async (blob: string) => (await container.getBlobClient(blob).downloadToBuffer()).toString();

  before(async () => {
    [server, browser] = await Promise.all([startServer({ args: ['--blob-versioning'] }), launchBrowser()]);
    assert.ok(server.blobUrl, 'the server printed no blob endpoint');
    const credential = new StorageSharedKeyCredential(devAccount, devKey);
    container = new BlobServiceClient(server.blobUrl, credential).getContainerClient('history');
    await container.create();
    for (const content of ['one', 'two!', 'three'])
      ids.push((await container.getBlockBlobClient('my notes.txt').upload(content, content.length)).versionId!);
    // A longer name under the same prefix: its versions are not the blob's.
    await container.getBlockBlobClient('my notes.txt.bak').upload('bak', 3);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    page.setDefaultTimeout(browserTimeoutMs);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('dialog', (dialog) => void (confirmAnswer ? dialog.accept() : dialog.dismiss()));
    await openContainer(page, server, 'history');
    await page.click('#blobs tr[data-blob="my notes.txt"] .blob-properties');
    await page.waitForSelector('#blob-details h3:has-text("my notes.txt")');
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test("a blob's details list its versions, the current one marked", async () => {
    await page.waitForSelector(versionRow(ids[2]!));
    assert.deepEqual(await listedVersions(), [ids[0], ids[1], `${ids[2]} current`]);
    assert.equal(await page.$(`${versionRow(ids[2]!)} .version-restore`), null);
    assert.equal(await page.textContent(`${versionRow(ids[1]!)} td.number`), '4 B');
  });

  test('a version downloads with its own content', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click(`${versionRow(ids[0]!)} .version-download`),
    ]);
    assert.equal(download.suggestedFilename(), 'my notes.txt');
    assert.equal(readFileSync((await download.path())!, 'utf8'), 'one');
  });

  test('Restore this version copies it onto the blob, keeping the one it replaces', async () => {
    await page.click(`${versionRow(ids[0]!)} .version-restore`);
    await page.waitForSelector(`#status:has-text("my notes.txt: version ${ids[0]} restored.")`);
    assert.equal(await text('my notes.txt'), 'one');
    await page.waitForSelector('#blob-versions tr[data-version]:nth-child(4)');
    const listed = await listedVersions();
    assert.deepEqual(listed.slice(0, 3), ids);
    assert.match(listed[3]!, / current$/);
    assert.notEqual(listed[3], `${ids[0]} current`);
  });

  test('a version is deleted after a confirmation; declined, it stays', async () => {
    confirmAnswer = false;
    await page.click(`${versionRow(ids[1]!)} .version-delete`);
    assert.equal((await listedVersions()).length, 4);
    confirmAnswer = true;
    await page.click(`${versionRow(ids[1]!)} .version-delete`);
    await page.waitForSelector(`#status:has-text("my notes.txt: version ${ids[1]} deleted.")`);
    await page.waitForSelector(versionRow(ids[1]!), { state: 'detached' });
    await page.waitForSelector(versionRow(ids[0]!));
    assert.equal((await listedVersions()).length, 3);
    const versions: string[] = [];
    for await (const item of container.listBlobsFlat({ includeVersions: true, prefix: 'my notes.txt' }))
      if (item.name === 'my notes.txt') versions.push(item.versionId!);
    assert.equal(versions.length, 3);
    assert.ok(!versions.includes(ids[1]!));
  });

  test('no errors on the page', () => {
    assert.deepEqual(pageErrors, []);
  });
});
