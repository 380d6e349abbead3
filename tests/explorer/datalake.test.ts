// The explorer and Data Lake file systems in a real Chromium against a real server process, on each
// engine: directories (empty ones too) are folders beside the prefixes of blob names, navigated with
// the breadcrumb; a path's owner, group, permissions and ACL are shown (getAccessControl) and set
// (setAccessControl), and "New directory" creates one (Create Path, resource=directory), each
// checked through the official Data Lake SDK.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { BlobServiceClient, StorageSharedKeyCredential as BlobKey } from '@azure/storage-blob';
import {
  DataLakeServiceClient,
  StorageSharedKeyCredential,
  type DataLakeFileSystemClient,
} from '@azure/storage-file-datalake';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { openContainer } from '../helpers/explorer.js';
import { devAccount, devKey, serverEngines, startServer, type RunningServer } from '../helpers/server.js';

for (const { label, options } of serverEngines) {
  describe(`explorer in Chromium: Data Lake directories and access control (${label})`, { skip: browserSkip() }, () => {
    let server: RunningServer;
    let browser: Browser;
    let page: Page;
    let fs: DataLakeFileSystemClient;
    const pageErrors: string[] = [];
    const folderRows = () =>
      page.$$eval('#blobs tr[data-folder]', (rows) =>
        rows.map(
          (row) => `${(row as any).dataset.folder}${(row as any).dataset.directory === undefined ? '' : ' dir'}`,
        ),
      );
    const shown = async (what: string) => (await page.textContent(`#access-shown-${what}`))!;

    before(async () => {
      [server, browser] = await Promise.all([startServer(options), launchBrowser()]);
      assert.ok(server.blobUrl, 'the server printed no blob endpoint');
      const credential = new StorageSharedKeyCredential(devAccount, devKey);
      fs = new DataLakeServiceClient(server.blobUrl, credential).getFileSystemClient('lake');
      await fs.create();
      await fs.getDirectoryClient('raw/2024').create();
      await fs.getDirectoryClient('empty').create();
      const file = fs.getFileClient('raw/2024/a.csv');
      await file.create();
      await file.append('x,y\n', 0, 4);
      await file.flush(4);
      // A blob written through the Blob API: its folder is implied by the name, no directory record.
      const blobs = new BlobServiceClient(server.blobUrl, new BlobKey(devAccount, devKey));
      await blobs.getContainerClient('lake').getBlockBlobClient('plain/x.txt').upload('x', 1);
      page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      page.setDefaultTimeout(browserTimeoutMs);
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await openContainer(page, server, 'lake');
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
    });

    test('directories are folders, an empty one too; the breadcrumb leads in and out', async () => {
      await page.waitForSelector('#blobs tr[data-folder="raw/"]');
      assert.deepEqual(await folderRows(), ['empty/ dir', 'plain/', 'raw/ dir']);
      // No directory record is listed as a blob.
      assert.equal(await page.$('#blobs tr[data-blob="raw"]'), null);
      await page.click('#blobs tr[data-folder="raw/"] button.link');
      await page.waitForSelector('#blobs tr[data-folder="raw/2024/"][data-directory="raw/2024"]');
      await page.click('#blobs tr[data-folder="raw/2024/"] button.link');
      await page.waitForSelector('#blobs tr[data-blob="raw/2024/a.csv"]');
      assert.deepEqual(
        await page.$$eval('#blob-path button', (buttons) => buttons.map((button) => (button as any).dataset.prefix)),
        ['', 'raw/', 'raw/2024/'],
      );
      await page.click('#blob-path button[data-prefix="raw/"]');
      await page.waitForSelector('#blobs tr[data-folder="raw/2024/"]');
      await page.click('#blobs tr[data-folder="raw/2024/"] button.link');
      await page.waitForSelector('#blobs tr[data-blob="raw/2024/a.csv"]');
    });

    test("a file's owner, group and permissions are shown and set", async () => {
      await page.click('#blobs tr[data-blob="raw/2024/a.csv"] .blob-properties');
      await page.waitForSelector('#access-shown-owner');
      assert.equal(await shown('owner'), '$superuser');
      assert.equal(await shown('permissions'), 'rw-r-----');
      assert.equal(await shown('acl'), 'user::rw-,group::r--,other::---');
      await page.fill('#access-owner', 'ann');
      await page.fill('#access-group', 'staff');
      await page.fill('#access-permissions', 'rwxr-x--x');
      await page.click('#access-save-permissions');
      await page.waitForSelector('#status:has-text("Permissions of raw/2024/a.csv set.")');
      await page.waitForSelector('#access-shown-owner:has-text("ann")');
      const access = await fs.getFileClient('raw/2024/a.csv').getAccessControl();
      assert.equal(access.owner, 'ann');
      assert.equal(access.group, 'staff');
      assert.equal(access._response.headers.get('x-ms-permissions'), 'rwxr-x--x');
      assert.equal(await shown('permissions'), 'rwxr-x--x');
    });

    test("a file's ACL is set; a malformed one is refused in the service's words", async () => {
      await page.fill('#access-acl', 'user::rw-,group::r--,other::---,user:alice:r--');
      await page.click('#access-save-acl');
      await page.waitForSelector('#status:has-text("ACL of raw/2024/a.csv set.")');
      await page.waitForSelector('#access-shown-permissions:has-text("rw-r-----+")');
      const access = await fs.getFileClient('raw/2024/a.csv').getAccessControl();
      // The service answers an ACL in its canonical order (named users after the owner's entry).
      assert.equal(access._response.headers.get('x-ms-acl'), 'user::rw-,user:alice:r--,group::r--,other::---');
      assert.equal(access.owner, 'ann');

      await page.fill('#access-acl', 'user:alice:maybe');
      await page.click('#access-save-acl');
      await page.waitForSelector('#status:has-text("400 InvalidHeaderValue")');
      const after = await fs.getFileClient('raw/2024/a.csv').getAccessControl();
      assert.equal(after._response.headers.get('x-ms-acl'), 'user::rw-,user:alice:r--,group::r--,other::---');
    });

    test("a directory's access control from its folder row; New directory makes one here", async () => {
      await page.click('#blob-path button[data-prefix="raw/"]');
      await page.click('#blobs tr[data-folder="raw/2024/"] .folder-properties');
      await page.waitForSelector('#access-card h3:has-text("directory")');
      assert.equal(await shown('permissions'), 'rwxr-x---');
      await page.fill('#access-permissions', 'rwxrwx--T');
      await page.click('#access-save-permissions');
      await page.waitForSelector('#status:has-text("Permissions of raw/2024 set.")');
      const access = await fs.getDirectoryClient('raw/2024').getAccessControl();
      assert.equal(access._response.headers.get('x-ms-permissions'), 'rwxrwx--T');

      await page.fill('#new-directory', 'made');
      await page.click('#directory-create');
      await page.waitForSelector('#status:has-text("Directory raw/made created.")');
      await page.waitForSelector('#blobs tr[data-folder="raw/made/"][data-directory="raw/made"]');
      const made = await fs.getDirectoryClient('raw/made').getAccessControl();
      assert.equal(made._response.headers.get('x-ms-resource-type'), 'directory');
      // Again: the service's 409 shown, nothing changed.
      await page.fill('#new-directory', 'made');
      await page.click('#directory-create');
      await page.waitForSelector('#status:has-text("409 PathAlreadyExists")');
      assert.deepEqual(pageErrors, []);
    });
  });
}
