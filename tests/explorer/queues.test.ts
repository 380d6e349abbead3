// The explorer's Queues view in a real Chromium against a real server process: the page is loaded
// from the table port and calls the queue port (docs/explorer.md "Across the service ports").
// Queues are created, paged and deleted, messages put, peeked (dequeue counts as Get Messages
// through the official SDK leaves them), shown base64-decoded, flagged as poison, and cleared.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { QueueClient } from '@azure/storage-queue';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { openExplorer } from '../helpers/explorer.js';
import { queueEndpoint, queueServiceClient } from '../helpers/queue.js';
import { tableClient } from '../helpers/sdk.js';
import { startServer, type RunningServer } from '../helpers/server.js';

const screenshotPath = fileURLToPath(new URL('../../../docs/explorer-queues.png', import.meta.url));

describe('explorer in Chromium: queues', { skip: browserSkip() }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let confirmAnswer = true;
  const confirmations: string[] = [];
  const pageErrors: string[] = [];
  const queue = (name: string): QueueClient => queueServiceClient(server).getQueueClient(name);

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(browserTimeoutMs);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => message.type() === 'error' && pageErrors.push(message.text()));
    page.on('dialog', (dialog) => {
      confirmations.push(dialog.message());
      void (confirmAnswer ? dialog.accept() : dialog.dismiss());
    });
    await openExplorer(page, server);
    await page.click('#service-queues');
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** Re-reads the count and the peek, and waits for the rows. */
  async function refresh(expectedRows: number): Promise<void> {
    await page.evaluate(() => ((globalThis as any).document.getElementById('queue-count').dataset.count = ''));
    await page.click('#peek-messages');
    await page.waitForSelector('#queue-count:not([data-count=""])');
    await page.waitForFunction(
      (n) => (globalThis as any).document.querySelectorAll('#messages tbody tr[data-id]').length === n,
      expectedRows,
    );
  }

  const dequeueCounts = (): Promise<string[]> =>
    page.$$eval('#messages tbody tr[data-id] .dequeue-count', (cells) =>
      cells.map((cell) => (cell as any).firstChild.textContent as string),
    );

  test('create a queue (a bad name is refused with the rule it breaks)', async () => {
    await page.fill('#new-queue', 'Bad_Name');
    await page.click('#create-queue');
    await page.waitForSelector('#status.error:has-text("only lower-case letters")');
    await page.fill('#new-queue', 'orders');
    await page.click('#create-queue');
    await page.waitForSelector('[data-queue-view="orders"] #queue-count[data-count="0"]');
    assert.ok(await page.$('#queue-list .table-link[data-queue="orders"][aria-current="true"]'));
    assert.equal(await queue('orders').exists(), true);
  });

  test('put messages: text exactly as typed, visibility timeout, never expiring', async () => {
    const text = 'hello <world> & "friends"\nline two';
    await page.fill('#message-text', text);
    await page.click('#put-message');
    await page.waitForSelector('#messages tbody tr[data-id]');
    await page.fill('#message-text', 'forever');
    await page.check('#ttl-never');
    await page.click('#put-message');
    await page.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('#messages tr[data-id]').length === 2,
    );
    await page.uncheck('#ttl-never');
    await page.fill('#message-text', 'later');
    await page.fill('#visibility-timeout', '3600');
    await page.click('#put-message');
    await page.waitForSelector('#queue-count[data-count="3"]');
    const peeked = (await queue('orders').peekMessages({ numberOfMessages: 32 })).peekedMessageItems;
    assert.deepEqual(
      peeked.map((m) => m.messageText),
      [text, 'forever'],
      'the invisible one is not peeked',
    );
    assert.equal(peeked[1]!.expiresOn.getUTCFullYear(), 9999);
    const cells = await page.$$eval('#messages tbody tr[data-id]', (rows) =>
      rows.map((row) => [...(row as any).cells].map((cell: any) => cell.textContent as string)),
    );
    assert.equal(cells.length, 2, 'the message put with a visibility timeout is not visible yet');
    assert.equal(cells[0]![1], text);
    assert.equal(cells[1]![3], 'never');
    assert.deepEqual(await dequeueCounts(), ['0', '0']);
  });

  test('the dequeue count after a Get through the SDK; poison hint from 5', async () => {
    const client = queue('orders');
    for (let round = 1; round <= 5; round++) {
      const received = await client.receiveMessages({ numberOfMessages: 32 });
      for (const message of received.receivedMessageItems) {
        // Visible again at once, as a consumer that gave up on it would leave it.
        await client.updateMessage(message.messageId, message.popReceipt, undefined, 0);
      }
      if (round === 1) {
        await refresh(2);
        assert.deepEqual(await dequeueCounts(), ['1', '1']);
        assert.equal(await page.$('#messages tr.poison'), null);
      }
    }
    await refresh(2);
    assert.deepEqual(await dequeueCounts(), ['5', '5']);
    assert.equal((await page.$$('#messages tr.poison .poison-hint')).length, 2);
    // Ids and times differ on every run: docs/explorer-queues.png is rewritten only when asked.
    if (process.env['CERULEAN_UPDATE_SCREENSHOT'] === '1' || !existsSync(screenshotPath))
      writeFileSync(screenshotPath, await page.screenshot());
  });

  test('base64 text as the SDKs write it is shown as stored, and decoded on request', async () => {
    const encoded = Buffer.from('héllo wörld {"id":7}').toString('base64');
    await queue('orders').sendMessage(encoded);
    await refresh(3);
    const texts = () => page.$$eval('#messages .message-text', (cells) => cells.map((c) => (c as any).textContent));
    assert.equal((await texts())[2], encoded);
    await page.check('#decode-base64');
    const decoded = await texts();
    assert.equal(decoded[2], 'héllo wörld {"id":7}');
    assert.match(decoded[1]!, /^\(not base64 of UTF-8 text\) forever$/);
    await page.uncheck('#decode-base64');
    assert.equal((await texts())[2], encoded);
  });

  test('clear messages asks first, then clears', async () => {
    confirmAnswer = false;
    confirmations.length = 0;
    await page.click('#clear-messages');
    assert.match(confirmations[0] ?? '', /Delete every message of orders/);
    assert.equal((await queue('orders').peekMessages()).peekedMessageItems.length, 1);
    confirmAnswer = true;
    await page.click('#clear-messages');
    await page.waitForSelector('#queue-count[data-count="0"]');
    await page.waitForSelector('#messages td:has-text("No visible messages.")');
    assert.equal((await queue('orders').getProperties()).approximateMessagesCount, 0);
  });

  test('queues listed by prefix, page by page (NextMarker)', async () => {
    const service = queueServiceClient(server);
    await Promise.all(Array.from({ length: 55 }, (_, i) => service.createQueue(`page-${String(i).padStart(2, '0')}`)));
    await page.fill('#queue-filter', 'page-');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#queue-list li').length === 50);
    assert.equal(await page.isVisible('#queue-more'), true);
    await page.click('#queue-more');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#queue-list li').length === 55);
    assert.equal(await page.isVisible('#queue-more'), false);
    const names = await page.$$eval('#queue-list .table-link', (buttons) =>
      buttons.map((b) => (b as any).dataset.queue),
    );
    assert.deepEqual(
      names,
      Array.from({ length: 55 }, (_, i) => `page-${String(i).padStart(2, '0')}`),
    );
  });

  test('delete a queue asks first', async () => {
    await page.fill('#queue-filter', 'ord');
    await page.waitForSelector('#queue-list li >> nth=0');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#queue-list li').length === 1);
    confirmAnswer = false;
    await page.click('#queue-list button[aria-label="Delete queue orders"]');
    assert.equal(await queue('orders').exists(), true);
    confirmAnswer = true;
    await page.click('#queue-list button[aria-label="Delete queue orders"]');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#queue-list li').length === 0);
    assert.equal(await queue('orders').exists(), false);
  });

  test('the page served from the queue port reaches the tables on theirs', async () => {
    await tableClient(server, 'FromQueuePort').createTable();
    const other = await browser.newPage();
    try {
      other.setDefaultTimeout(browserTimeoutMs);
      other.on('pageerror', (error) => pageErrors.push(error.message));
      await other.goto(`${new URL(queueEndpoint(server)).origin}/_explorer/`);
      await other.waitForSelector('#table-list .table-link[data-table="FromQueuePort"]');
      await other.fill('#new-table', 'MadeFromQueuePort');
      await other.click('#create-table');
      await other.waitForSelector('#table-list .table-link[data-table="MadeFromQueuePort"]');
      await tableClient(server, 'MadeFromQueuePort').createEntity({ partitionKey: 'p', rowKey: 'r' });
    } finally {
      await other.close();
    }
  });

  test('no errors on the page', () => {
    assert.deepEqual(pageErrors, []);
  });
});
