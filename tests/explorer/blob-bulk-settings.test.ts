// The explorer's blob actions on many blobs and on a container, in a real Chromium against a real
// server process: the blob type column, a folder uploaded with its relative paths as blob names,
// ticked blobs deleted after one confirmation (Blob Batch when the server answers it, else one
// Delete Blob each: whichever the server does, the blobs go), and a container's public access
// level, stored access policies and a container SAS, each checked through the official SDK or
// anonymous HTTP.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { BlobServiceClient, StorageSharedKeyCredential, type ContainerClient } from '@azure/storage-blob';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { openExplorer } from '../helpers/explorer.js';
import { devAccount, devKey, makeTempDir, removeDir, startServer, type RunningServer } from '../helpers/server.js';

describe(
  'explorer in Chromium: blob types, folder upload, bulk delete, container settings',
  { skip: browserSkip() },
  () => {
    let server: RunningServer;
    let browser: Browser;
    let page: Page;
    let container: ContainerClient;
    let folder: string;
    let confirmAnswer = true;
    const confirmations: string[] = [];
    const pageErrors: string[] = [];
    const batchStatuses: number[] = [];
    const blobRow = (name: string): string => `#blobs tr[data-blob="${name}"]`;
    const listedNames = (): Promise<string[]> =>
      page.$$eval('#blobs tr[data-blob]', (rows) => rows.map((row) => (row as any).dataset.blob as string));
    const storedNames = async (): Promise<string[]> => {
      const names: string[] = [];
      for await (const blob of container.listBlobsFlat()) names.push(blob.name);
      return names;
    };
    /** Re-lists the folder shown and waits for the listing to be redrawn. */
    async function relist(): Promise<void> {
      await page.evaluate(() => delete (globalThis as any).document.querySelector('#blobs tbody').dataset.loaded);
      await page.click('#blobs-refresh');
      await page.waitForSelector('#blobs tbody[data-loaded]', { state: 'attached' });
    }

    before(async () => {
      [server, browser] = await Promise.all([startServer(), launchBrowser()]);
      assert.ok(server.blobUrl, 'the server printed no blob endpoint');
      folder = makeTempDir('cerulean-explorer-folder-');
      const credential = new StorageSharedKeyCredential(devAccount, devKey);
      container = new BlobServiceClient(server.blobUrl, credential).getContainerClient('site');
      await container.create();
      page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      page.setDefaultTimeout(browserTimeoutMs);
      page.on('pageerror', (error) => pageErrors.push(error.message));
      page.on('response', (response) => {
        if (/[?&]comp=batch/.test(response.url())) batchStatuses.push(response.status());
      });
      page.on('dialog', (dialog) => {
        confirmations.push(dialog.message());
        void (confirmAnswer ? dialog.accept() : dialog.dismiss());
      });
      await openExplorer(page, server);
      await page.click('#service-blobs');
      await page.click('#container-list .table-link[data-container="site"]');
      await page.waitForSelector('[data-container-view="site"] #blobs td:has-text("No blobs here.")');
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
      if (folder !== undefined) removeDir(folder);
    });

    test('the blob type of each blob, as List Blobs names it', async () => {
      await container.getBlockBlobClient('block.txt').upload('b', 1);
      await container.getAppendBlobClient('log.txt').create();
      await relist();
      const types = await page.$$eval('#blobs tr[data-blob]', (rows) =>
        rows.map((row) => [(row as any).dataset.blob, row.querySelector('.blob-type')?.textContent]),
      );
      assert.deepEqual(types, [
        ['block.txt', 'BlockBlob'],
        ['log.txt', 'AppendBlob'],
      ]);
    });

    test('a folder upload keeps each file path under the folder as the blob name, with progress', async () => {
      mkdirSync(join(folder, 'public', 'css'), { recursive: true });
      writeFileSync(join(folder, 'public', 'index.html'), '<h1>hi</h1>');
      writeFileSync(join(folder, 'public', 'css', 'site.css'), 'h1 { color: blue }');
      await page.setInputFiles('#upload-folder', join(folder, 'public'));
      await page.waitForSelector('#upload-progress:has-text("2 of 2 files")');
      await page.waitForSelector('#status:has-text("Uploaded 2 files")');
      assert.deepEqual((await storedNames()).sort(), [
        'block.txt',
        'log.txt',
        'public/css/site.css',
        'public/index.html',
      ]);
      const css = await container.getBlobClient('public/css/site.css').downloadToBuffer();
      assert.equal(css.toString(), 'h1 { color: blue }');
      await page.waitForSelector('#blobs tr[data-folder="public/"]');
    });

    test('ticked blobs are deleted after one confirmation; a server without Blob Batch gets single deletes', async () => {
      for (const name of ['a.bin', 'b.bin', 'c.bin']) await container.getBlockBlobClient(name).upload('x', 1);
      await relist();
      await page.check(`${blobRow('a.bin')} .blob-select`);
      await page.check(`${blobRow('c.bin')} .blob-select`);
      await page.check(`${blobRow('log.txt')} .blob-select`);
      await page.waitForSelector('#blobs-delete-selected:has-text("Delete selected (3)")');
      confirmAnswer = false;
      confirmations.length = 0;
      await page.click('#blobs-delete-selected');
      assert.match(confirmations[0] ?? '', /Delete 3 blobs\?/);
      assert.equal(await container.getBlobClient('a.bin').exists(), true);
      confirmAnswer = true;
      await page.click('#blobs-delete-selected');
      await page.waitForSelector('#status:has-text("Deleted 3 blobs")');
      assert.deepEqual((await storedNames()).sort(), [
        'b.bin',
        'block.txt',
        'public/css/site.css',
        'public/index.html',
      ]);
      assert.deepEqual((await listedNames()).sort(), ['b.bin', 'block.txt']);
      // The server serves Blob Batch: the three deletes went as one batch request, not one by one.
      assert.deepEqual(batchStatuses, [202], 'one Blob Batch request, accepted');
      assert.match((await page.textContent('#status')) ?? '', /in Blob Batch requests/);
      await page.waitForSelector('#blobs-delete-selected:has-text("Delete selected (0)")');
    });

    test('public access level: anonymous listing follows it, and the stored policies are kept', async () => {
      await container.setAccessPolicy(undefined, [
        { id: 'kept', accessPolicy: { permissions: 'r', expiresOn: new Date('2031-01-01T00:00:00Z') } },
      ]);
      const anonymousList = `${server.blobUrl}/site?restype=container&comp=list`;
      assert.notEqual((await fetch(anonymousList)).status, 200, 'private at first');
      await page.click('#container-settings');
      await page.waitForSelector('#container-policy-list .policy');
      assert.equal(await page.inputValue('#container-public-access'), 'private');
      await page.selectOption('#container-public-access', 'container');
      await page.click('#container-public-access-save');
      await page.waitForSelector('#status:has-text("Public access of site: container.")');
      const listed = await fetch(anonymousList);
      assert.equal(listed.status, 200);
      assert.match(await listed.text(), /<Name>b\.bin<\/Name>/);
      const acl = await container.getAccessPolicy();
      assert.equal(acl.blobPublicAccess, 'container');
      assert.deepEqual(
        acl.signedIdentifiers.map((identifier) => identifier.id),
        ['kept'],
      );
    });

    test('stored access policies: add one, a container SAS naming it lists, removing it revokes the SAS', async () => {
      await page.click('#container-policy-add');
      const row = '#container-policy-list .policy:nth-child(2)';
      await page.fill(`${row} .policy-id`, 'listers');
      await page.fill(`${row} .policy-expiry`, '2030-01-01T00:00:00Z');
      await page.check(`${row} .perm-l`);
      await page.click('#container-policy-save');
      await page.waitForSelector('#status:has-text("Saved 2 stored access policies")');
      const acl = await container.getAccessPolicy();
      assert.equal(acl.blobPublicAccess, 'container', 'the level is kept');
      const listers = acl.signedIdentifiers.find((identifier) => identifier.id === 'listers');
      assert.equal(listers?.accessPolicy?.permissions, 'rl');
      await page.waitForSelector('#container-sas-policy option[value="listers"]', { state: 'attached' });
      await page.selectOption('#container-sas-policy', 'listers');
      await page.uncheck('#container-sas-r');
      await page.fill('#container-sas-expiry', '');
      await page.click('#container-sas-generate');
      await page.waitForFunction(() => (globalThis as any).document.getElementById('container-sas-url').value !== '');
      const url = new URL(await page.inputValue('#container-sas-url'));
      assert.equal(url.searchParams.get('si'), 'listers');
      assert.equal(url.searchParams.get('sr'), 'c');
      // Anonymous listing is allowed now, so the SAS is proved on a container made private again.
      await container.setAccessPolicy(undefined, acl.signedIdentifiers);
      const list = (sas: URL) =>
        fetch(`${sas.origin}${sas.pathname}?restype=container&comp=list&${sas.search.slice(1)}`);
      const byPolicy = await list(url);
      assert.equal(byPolicy.status, 200, await byPolicy.clone().text());
      assert.match(await byPolicy.text(), /<Name>block\.txt<\/Name>/);
      await page.click('#container-settings');
      await page.waitForSelector('#container-public-access-save');
      await page.waitForFunction(
        () => (globalThis as any).document.querySelectorAll('#container-policy-list .policy').length === 2,
      );
      await page.click('#container-policy-list .policy:nth-child(2) button[aria-label="delete policy"]');
      await page.click('#container-policy-save');
      await page.waitForSelector('#status:has-text("Saved 1 stored access policy")');
      assert.deepEqual(
        (await container.getAccessPolicy()).signedIdentifiers.map((identifier) => identifier.id),
        ['kept'],
      );
      assert.equal((await list(url)).status, 403, 'the SAS named a policy that is gone');
    });

    test('a container SAS with its own permissions reads a blob and lists, and writes nothing', async () => {
      await page.selectOption('#container-sas-policy', '');
      await page.check('#container-sas-l');
      await page.fill('#container-sas-expiry', '2030-01-01T00:00:00Z');
      await page.evaluate(() => ((globalThis as any).document.getElementById('container-sas-url').value = ''));
      await page.click('#container-sas-generate');
      await page.waitForFunction(() => (globalThis as any).document.getElementById('container-sas-url').value !== '');
      const sas = new URL(await page.inputValue('#container-sas-url'));
      assert.equal(sas.searchParams.get('sp'), 'rl');
      const read = await fetch(`${sas.origin}${sas.pathname}/b.bin${sas.search}`);
      assert.equal(read.status, 200);
      assert.equal(await read.text(), 'x');
      const write = await fetch(`${sas.origin}${sas.pathname}/new.bin${sas.search}`, {
        method: 'PUT',
        headers: { 'x-ms-blob-type': 'BlockBlob' },
        body: 'y',
      });
      assert.equal(write.status, 403);
    });

    test('no errors on the page', () => {
      assert.deepEqual(pageErrors, []);
    });
  },
);
