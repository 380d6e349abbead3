// The explorer's blob index tags in a real Chromium against a real server process: the selected
// blob's "Index tags" card (Get Blob Tags, Set Blob Tags: add, remove, the service's refusal shown)
// and the container's "Find by tags" box (Find Blobs by Tags in the container).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { BlobServiceClient, StorageSharedKeyCredential, type ContainerClient } from '@azure/storage-blob';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { openContainer } from '../helpers/explorer.js';
import { devAccount, devKey, startServer, type RunningServer } from '../helpers/server.js';

describe('explorer in Chromium: blob index tags', { skip: browserSkip() }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let container: ContainerClient;
  const pageErrors: string[] = [];
  const tagRows = () =>
    page.$$eval('#tag-list .tag-row', (rows) =>
      rows.map((row) => {
        const input = (name: string) => (row as any).querySelector(name).value as string;
        return `${input('.tag-key')}=${input('.tag-value')}`;
      }),
    );
  const found = () =>
    page.$$eval('#find-tags-results tr[data-found]', (rows) => rows.map((row) => (row as any).dataset.found));

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    assert.ok(server.blobUrl, 'the server printed no blob endpoint');
    const credential = new StorageSharedKeyCredential(devAccount, devKey);
    container = new BlobServiceClient(server.blobUrl, credential).getContainerClient('tagged');
    await container.create();
    await container.getBlockBlobClient('blue.txt').upload('b', 1, { tags: { project: 'blue', size: '3' } });
    await container.getBlockBlobClient('red.txt').upload('r', 1, { tags: { project: 'red' } });
    await container.getBlockBlobClient('plain.txt').upload('p', 1);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(browserTimeoutMs);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await openContainer(page, server, 'tagged');
    await page.waitForSelector('#blobs tr[data-blob="plain.txt"]');
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test("a blob's details show its tags (and no versions)", async () => {
    await page.click('#blobs tr[data-blob="blue.txt"] .blob-properties');
    await page.waitForSelector('#blob-details h3:has-text("blue.txt")');
    await page.waitForSelector('#tags-save');
    assert.deepEqual((await tagRows()).sort(), ['project=blue', 'size=3']);
    // This server keeps no versions: the Versions card says so.
    await page.waitForSelector('#blob-versions-card:has-text("No versions")');
  });

  test('edit the tags: add one, remove one, save', async () => {
    await page.click('#blobs tr[data-blob="plain.txt"] .blob-properties');
    await page.waitForSelector('#blob-details h3:has-text("plain.txt")');
    assert.deepEqual(await tagRows(), []);
    await page.click('#tag-add');
    await page.fill('#tag-list .tag-row:nth-child(1) .tag-key', 'project');
    await page.fill('#tag-list .tag-row:nth-child(1) .tag-value', 'blue');
    await page.click('#tag-add');
    await page.fill('#tag-list .tag-row:nth-child(2) .tag-key', 'owner');
    await page.fill('#tag-list .tag-row:nth-child(2) .tag-value', 'ann');
    await page.click('#tags-save');
    await page.waitForSelector('#status:has-text("Tags of plain.txt saved: project=blue, owner=ann.")');
    assert.deepEqual((await container.getBlobClient('plain.txt').getTags()).tags, { project: 'blue', owner: 'ann' });
    await page.click('#tag-list .tag-row:nth-child(2) .tag-remove');
    await page.click('#tags-save');
    await page.waitForSelector('#status:has-text("Tags of plain.txt saved: project=blue.")');
    assert.deepEqual((await container.getBlobClient('plain.txt').getTags()).tags, { project: 'blue' });
  });

  test("at most 10 rows; the service's refusal is shown in its words", async () => {
    for (let i = 0; i < 9; i++) await page.click('#tag-add');
    assert.equal((await tagRows()).length, 10);
    assert.equal(await page.isDisabled('#tag-add'), true);
    await page.fill('#tag-list .tag-row:nth-child(2) .tag-key', 'bad key!');
    await page.click('#tags-save');
    await page.waitForSelector('#status.error:has-text("400 InvalidTag")');
    assert.match((await page.textContent('#status')) ?? '', /letters, digits/);
    assert.deepEqual((await container.getBlobClient('plain.txt').getTags()).tags, { project: 'blue' });
    await page.click('#tag-list .tag-row:nth-child(10) .tag-remove');
    assert.equal(await page.isDisabled('#tag-add'), false);
  });

  // The service answers each match with the tags its expression names, not all of them (find-blobs-by-tags).
  test('Find by tags lists the matches of the expression in the container', async () => {
    await page.fill('#find-tags-where', `"project" = 'blue'`);
    await page.click('#find-tags-run');
    await page.waitForSelector('#find-tags-results tr[data-found]');
    assert.deepEqual((await found()).sort(), ['blue.txt', 'plain.txt']);
    assert.equal(await page.textContent('#find-tags-results tr[data-found="blue.txt"] .found-tags'), 'project=blue');
    await page.fill('#find-tags-where', `"project" = 'green'`);
    await page.click('#find-tags-run');
    await page.waitForSelector('#find-tags-results td:has-text("No matches.")');
    await page.fill('#find-tags-where', `"project" =`);
    await page.click('#find-tags-run');
    await page.waitForSelector('#status.error:has-text("400")');
  });

  test('a match opens its details', async () => {
    await page.fill('#find-tags-where', `"project" = 'red'`);
    await page.click('#find-tags-run');
    await page.click('#find-tags-results tr[data-found="red.txt"] button');
    await page.waitForSelector('#blob-details h3:has-text("red.txt")');
    await page.waitForSelector('#tags-save');
    assert.deepEqual(await tagRows(), ['project=red']);
  });

  test('no errors on the page', () => {
    assert.deepEqual(pageErrors, []);
  });
});
