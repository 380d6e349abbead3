// The explorer's consumer actions on a queue in a real Chromium against a real server process:
// dequeue one message (shown with its pop receipt, hidden from the SDK's peek) and delete it by id
// and pop receipt; move a poison queue's messages back to its source (count, most, stop), checked
// through the official SDK; and the status line emptied when the service tab changes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { QueueClient } from '@azure/storage-queue';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { openExplorer } from '../helpers/explorer.js';
import { queueServiceClient } from '../helpers/queue.js';
import { startServer, type RunningServer } from '../helpers/server.js';

describe('explorer in Chromium: dequeue, delete, move, status per tab', { skip: browserSkip() }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const queue = (name: string): QueueClient => queueServiceClient(server).getQueueClient(name);
  const texts = async (name: string): Promise<string[]> =>
    (await queue(name).peekMessages({ numberOfMessages: 32 })).peekedMessageItems.map((m) => m.messageText);

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(browserTimeoutMs);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('dialog', (dialog) => void dialog.accept());
    for (const name of ['work', 'work-poison']) await queue(name).create();
    await openExplorer(page, server);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function openQueue(name: string): Promise<void> {
    await page.click('#service-queues');
    await page.click(`#queue-list .table-link[data-queue="${name}"]`);
    await page.waitForSelector(`[data-queue-view="${name}"] #queue-count[data-count]`);
  }

  test('dequeue one message: its pop receipt is shown and it is hidden; delete it by id and pop receipt', async () => {
    await queue('work').sendMessage('first');
    await queue('work').sendMessage('second');
    await openQueue('work');
    await page.click('#dequeue-message');
    await page.waitForSelector('#dequeued tbody tr[data-id]');
    const [id, text, popReceipt] = await page.$eval('#dequeued tbody tr[data-id]', (row) =>
      [...(row as any).cells].slice(0, 3).map((cell: any) => cell.textContent as string),
    );
    assert.equal(text, 'first');
    assert.ok(popReceipt !== undefined && popReceipt.length > 0, 'a pop receipt');
    assert.deepEqual(await texts('work'), ['second'], 'the dequeued message is hidden');
    await page.click(`#dequeued tr[data-id="${id}"] .message-delete`);
    await page.waitForSelector(`#status:has-text("Message ${id} deleted.")`);
    assert.equal(await page.$('#dequeued tbody tr[data-id]'), null);
    assert.equal((await queue('work').getProperties()).approximateMessagesCount, 1);
    // Dequeue the last one, and again: nothing visible is said, not an error.
    await page.click('#dequeue-message');
    await page.waitForSelector('#dequeued tbody tr[data-id] >> nth=0');
    await page.click('#dequeue-message');
    await page.waitForSelector('#status:has-text("work has no visible message to dequeue.")');
    assert.equal(await page.getAttribute('#status', 'class'), 'info');
  });

  test("a poison queue's messages move back to its source, at most as many as asked", async () => {
    for (const text of ['p1', 'p2', 'p3', 'p4']) await queue('work-poison').sendMessage(text);
    await openQueue('work-poison');
    assert.equal(await page.inputValue('#move-destination'), 'work');
    await page.fill('#move-max', '3');
    await page.click('#move-start');
    await page.waitForSelector('#move-count[data-done="3"]');
    await page.waitForSelector('#status:has-text("Moved 3 messages from work-poison to work.")');
    assert.deepEqual(await texts('work-poison'), ['p4']);
    assert.deepEqual(await texts('work'), ['p1', 'p2', 'p3'], 'the dequeued "second" is still hidden');
  });

  test('stop ends a move after the message in flight', async () => {
    for (const text of ['p5', 'p6']) await queue('work-poison').sendMessage(text);
    // Hold the first put to the destination until Stop has been clicked.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\/work\/messages\?/, async (route) => {
      if (route.request().method() === 'POST') await released;
      await route.continue();
    });
    await page.fill('#move-max', '100');
    await page.evaluate(() => delete (globalThis as any).document.getElementById('move-count').dataset.done);
    await page.click('#move-start');
    await page.waitForSelector('#move-count:has-text("moved 0")');
    await page.click('#move-stop');
    release();
    await page.waitForSelector('#move-count[data-done="1"]');
    await page.waitForSelector('#status:has-text("(stopped)")');
    await page.unroute(/\/work\/messages\?/);
    assert.deepEqual(await texts('work-poison'), ['p5', 'p6']);
    assert.deepEqual(await texts('work'), ['p1', 'p2', 'p3', 'p4']);
  });

  test('the status line is emptied when the service tab changes', async () => {
    await page.click('#service-queues');
    await page.fill('#new-queue', 'Bad_Name');
    await page.click('#create-queue');
    await page.waitForSelector('#status.error:has-text("only lower-case letters")');
    await page.click('#service-blobs');
    assert.equal(await page.textContent('#status'), '');
    await page.click('#service-tables');
    await page.waitForSelector('#status:has-text("devstoreaccount1: 0 tables")');
  });

  test('no errors on the page', () => {
    assert.deepEqual(pageErrors, []);
  });
});
