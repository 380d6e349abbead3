// The explorer in a real Chromium, second part: export and import round trips in typed
// CSV and JSON lines, stored access policies, SAS URLs, CORS rules, account choice, keyboard, narrow
// and dark layouts, and the README's screenshot. One browser for the file; an in-memory server.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AzureNamedKeyCredential, AzureSASCredential, TableClient, type TableTransaction } from '@azure/data-tables';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { gridRowKeys, openExplorer, openTable, runQuery, typedTable } from '../helpers/explorer.js';
import { clientOptions, serviceClient, tableClient } from '../helpers/sdk.js';
import { startServer, type RunningServer } from '../helpers/server.js';

const screenshotPath = fileURLToPath(new URL('../../../docs/explorer.png', import.meta.url));
const secondKey = Buffer.from('the second account key, 32 byte').toString('base64');

describe('explorer in Chromium: export, import, policies, SAS, CORS, accounts, layout', { skip: browserSkip() }, () => {
  let server: RunningServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    [server, browser] = await Promise.all([
      startServer({ inMemory: true, env: { AZURITE_ACCOUNTS: `second1:${secondKey}` } }),
      launchBrowser(),
    ]);
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
    context.setDefaultTimeout(browserTimeoutMs);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: `http://127.0.0.1:${server.port}`,
    });
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('dialog', (dialog) => void dialog.accept());
    await seed(server);
    await openExplorer(page, server);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('screenshot for the README', async () => {
    await openTable(page, 'People');
    await page.click('#add-condition');
    await page.fill('.condition:nth-child(1) .value', 'team-a');
    await page.click('#add-condition');
    await page.fill('.condition:nth-child(2) .property', 'Age');
    await page.selectOption('.condition:nth-child(2) .comparison', 'ge');
    await page.selectOption('.condition:nth-child(2) .type', 'Edm.Int32');
    await page.fill('.condition:nth-child(2) .value', '80');
    await page.click('#apply-builder');
    await page.waitForSelector('#plan:has-text("partition-scan · read 4 · returned 2")');
    const png = await page.screenshot();
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    // Timestamps and timings differ on every run: docs/explorer.png is rewritten only when asked.
    if (process.env['CERULEAN_UPDATE_SCREENSHOT'] === '1' || !existsSync(screenshotPath))
      writeFileSync(screenshotPath, png);
  });

  test('export all results as typed CSV across pages, import it into another table: the same entities and types', async () => {
    await openTable(page, 'Source');
    await page.selectOption('#export-format', 'typed-csv');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-all')]);
    assert.equal(download.suggestedFilename(), 'Source.typed.csv');
    const text = readFileSync((await download.path())!, 'utf8');
    assert.match((await page.textContent('#transfer-progress'))!, /^exported 1003 entities$/);
    const lines = text.split('\r\n');
    assert.equal(
      lines[0],
      'PartitionKey,RowKey,Timestamp,N,N@type,S,S@type,I,I@type,L,L@type,D,D@type,B,B@type,T,T@type,G,G@type,X,X@type,Flag,Flag@type',
    );
    assert.match(lines[1]!, /^bulk,b0000,\d{4}-[^,]+Z,0,Edm\.Int32,+$/);
    assert.equal(lines[1]!.split(',').length, 3 + 20, 'rows of the first page are padded to the columns found later');
    assert.ok(text.includes(',"a, ""quoted""\nvalue",Edm.String,'), 'RFC 4180 quoting');
    assert.ok(text.includes(',9223372036854775807,Edm.Int64,NaN,Edm.Double,'));
    assert.ok(
      lines.some((line) => /^typed,t3,[^,]+Z,{20}$/.test(line)),
      'an entity without properties has empty cells',
    );

    await page.fill('#new-table', 'TargetCsv');
    await page.click('#create-table');
    await page.waitForSelector('#no-entities');
    await page.setInputFiles('#import-file', {
      name: 'Source.typed.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(text),
    });
    await page.waitForSelector('#transfer-progress:has-text("imported 1003 of 1003 entities")', {
      timeout: browserTimeoutMs,
    });
    assert.deepEqual(await typedTable(server, 'TargetCsv'), await typedTable(server, 'Source'));
  });

  test('export a page as JSON lines and import it back', async () => {
    await openTable(page, 'Source');
    await runQuery(page, { filter: "PartitionKey eq 'typed'" });
    await page.selectOption('#export-format', 'jsonl');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-page')]);
    assert.equal(download.suggestedFilename(), 'Source.jsonl');
    const text = readFileSync((await download.path())!, 'utf8');
    const lines = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.map((line) => line.RowKey),
      ['t1', 't2', 't3'],
    );
    assert.equal(lines[0]['L@odata.type'], 'Edm.Int64');
    assert.equal(lines[0].L, '9223372036854775807');

    await page.fill('#new-table', 'TargetJson');
    await page.click('#create-table');
    await page.waitForSelector('#no-entities');
    await page.setInputFiles('#import-file', {
      name: 'page.jsonl',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from(text),
    });
    await page.waitForSelector('#transfer-progress:has-text("imported 3 of 3")');
    const source = await typedTable(server, 'Source');
    const target = await typedTable(server, 'TargetJson');
    assert.deepEqual([...target.keys()], ['typed/t1', 'typed/t2', 'typed/t3']);
    for (const [key, properties] of target) assert.deepEqual(properties, source.get(key), key);
  });

  test('import a Storage Explorer file: short type names, types only on the first row; a bad value imports nothing', async () => {
    await page.fill('#new-table', 'FromExplorer');
    await page.click('#create-table');
    await page.waitForSelector('#no-entities');
    const file =
      'PartitionKey,RowKey,Timestamp,Count,Count@type,Note,Note@type\r\n' +
      'a,1,2025-09-22T09:45:35.2743359Z,2,Int32,"x, y",String\r\n' +
      'a,2,,4,,,\r\n';
    await page.setInputFiles('#import-file', {
      name: 'FromExplorer.typed.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(file),
    });
    await page.waitForSelector('#transfer-progress:has-text("imported 2 of 2")');
    assert.deepEqual(Object.fromEntries(await typedTable(server, 'FromExplorer')), {
      'a/1': { Count: ['Edm.Int32', 2], Note: ['Edm.String', 'x, y'] },
      'a/2': { Count: ['Edm.Int32', 4] },
    });
    const bad = 'PartitionKey,RowKey,Count,Count@type\r\nb,1,1,Edm.Int32\r\nb,2,99999999999,Edm.Int32\r\n';
    await page.setInputFiles('#import-file', { name: 'bad.typed.csv', mimeType: 'text/csv', buffer: Buffer.from(bad) });
    await page.waitForSelector('#transfer-progress:has-text("nothing imported")');
    assert.match((await page.textContent('#transfer-progress'))!, /record 3: Count: '99999999999' is not Edm\.Int32/);
    assert.equal((await typedTable(server, 'FromExplorer')).size, 2);

    // Imports go in batches per partition; a batch the service refuses (a key twice, a key it does
    // not allow) is written entity by entity, so the rest still goes in and the failure is named.
    const mixed =
      'PartitionKey,RowKey,N,N@type\r\nd,1,1,Edm.Int32\r\nd,1,2,Edm.Int32\r\nd,x/y,3,Edm.Int32\r\nd,2,4,Edm.Int32\r\n';
    await page.setInputFiles('#import-file', {
      name: 'mixed.typed.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(mixed),
    });
    await page.waitForSelector('#transfer-progress:has-text("imported 3 of 4")');
    assert.match((await page.textContent('#transfer-progress'))!, /1 failed, first: d\/x\/y: 400 /);
    const imported = await typedTable(server, 'FromExplorer');
    assert.deepEqual(imported.get('d/1'), { N: ['Edm.Int32', 2] }, 'the later line wins');
    assert.deepEqual(imported.get('d/2'), { N: ['Edm.Int32', 4] });
  });

  test('file readers: RFC 4180 quoting, a BOM, rows without properties, and errors that name the line', async () => {
    const results = await page.evaluate(async () => {
      const { csvRecords, parseImport } = await import(`${(globalThis as any).location.href}formats.js`);
      const plain = (entities: any[]) => entities.map((e) => [e.partitionKey, e.rowKey, [...e.properties]]);
      const failure = (action: () => unknown) => {
        try {
          action();
          return 'no error';
        } catch (error) {
          return (error as Error).message;
        }
      };
      return {
        records: csvRecords('a,"b\r\nc",""\r\nd,"e""f"\n'),
        unterminated: failure(() => csvRecords('a,"b')),
        csv: plain(parseImport('typed-csv', '\uFEFFPartitionKey,RowKey,N,N@type\r\np,1,5,Edm.Int64\r\np,2\r\n')),
        noKeys: failure(() => parseImport('typed-csv', 'RowKey,N\r\n1,2\r\n')),
        unknownType: failure(() => parseImport('typed-csv', 'PartitionKey,RowKey,N,N@type\r\np,1,5,Edm.Decimal\r\n')),
        jsonl: failure(() =>
          parseImport('jsonl', '{"PartitionKey":"p","RowKey":"1","N@odata.type":"Edm.Int64","N":"5"}\n\nnot json\n'),
        ),
      };
    });
    assert.deepEqual(results.records, [
      ['a', 'b\r\nc', ''],
      ['d', 'e"f'],
    ]);
    assert.match(results.unterminated, /not closed/);
    assert.deepEqual(results.csv, [
      ['p', '1', [['N', { type: 'Edm.Int64', text: '5' }]]],
      ['p', '2', []],
    ]);
    assert.match(results.noKeys, /needs PartitionKey and RowKey/);
    assert.match(results.unknownType, /record 2: unknown type 'Edm\.Decimal'/);
    assert.match(results.jsonl, /^line 3: /);
  });

  test('stored access policies: add, edit, delete', async () => {
    const client = tableClient(server, 'People');
    await openTable(page, 'People');
    await page.click('#tab-policies');
    await page.waitForSelector('#policy-add');
    await page.click('#policy-add');
    await page.fill('.policy:nth-child(1) .policy-id', 'readers');
    await page.fill('.policy:nth-child(1) .policy-expiry', '2030-01-01T00:00:00Z');
    await page.click('#policy-add');
    await page.fill('.policy:nth-child(2) .policy-id', 'writers');
    await page.fill('.policy:nth-child(2) .policy-start', '2024-01-01T00:00:00Z');
    await page.fill('.policy:nth-child(2) .policy-expiry', '2031-01-01T00:00:00Z');
    await page.check('.policy:nth-child(2) .perm-a');
    await page.check('.policy:nth-child(2) .perm-u');
    await page.click('#policy-save');
    await page.waitForSelector('#status:has-text("Saved 2 stored access policies")');
    let policies = await client.getAccessPolicy();
    assert.deepEqual(
      policies.map((p) => [p.id, p.accessPolicy?.permission, p.accessPolicy?.expiry?.toISOString()]),
      [
        ['readers', 'r', '2030-01-01T00:00:00.000Z'],
        ['writers', 'rau', '2031-01-01T00:00:00.000Z'],
      ],
    );
    await page.uncheck('.policy:nth-child(2) .perm-u');
    await page.click('.policy:nth-child(1) button[aria-label="delete policy"]');
    await page.click('#policy-save');
    await page.waitForSelector('#status:has-text("Saved 1 stored access policy")');
    policies = await client.getAccessPolicy();
    assert.deepEqual(
      policies.map((p) => [p.id, p.accessPolicy?.permission, p.accessPolicy?.start?.toISOString()]),
      [['writers', 'ra', '2024-01-01T00:00:00.000Z']],
    );
  });

  test('a SAS URL for the table with a key range, copied, works as a client would use it', async () => {
    await openTable(page, 'People');
    await page.click('#tab-policies');
    await page.waitForSelector('#sas-policy option[value="writers"]', { state: 'attached' });
    await page.fill('#sas-spk', 'team-b');
    await page.fill('#sas-epk', 'team-b');
    await page.click('#sas-generate');
    await page.waitForFunction(() => (globalThis as any).document.getElementById('sas-url').value !== '');
    await page.click('#sas-copy');
    const url = await page.evaluate(() => (globalThis as any).navigator.clipboard.readText());
    assert.equal(url, await page.inputValue('#sas-url'));
    const [base, token] = url.split('?') as [string, string];
    assert.equal(base, `http://127.0.0.1:${server.port}/devstoreaccount1/People`);
    assert.match(token, /sp=r&/);
    const client = new TableClient(
      base.replace(/\/People$/, ''),
      'People',
      new AzureSASCredential(token),
      clientOptions,
    );
    const seen: string[] = [];
    for await (const entity of client.listEntities()) seen.push(entity.partitionKey!);
    assert.ok(seen.length > 0 && seen.every((pk) => pk === 'team-b'), `only the key range: ${seen.join()}`);
    await assert.rejects(
      client.createEntity({ partitionKey: 'team-b', rowKey: 'new' }),
      (error: any) => error.statusCode === 403,
    );

    // Naming the stored policy: its permissions (read, add) and dates apply.
    await page.selectOption('#sas-policy', 'writers');
    await page.uncheck('#sas-r');
    await page.fill('#sas-expiry', '');
    await page.fill('#sas-spk', '');
    await page.fill('#sas-epk', '');
    await page.click('#sas-generate');
    await page.waitForFunction((old) => (globalThis as any).document.getElementById('sas-url').value !== old, url);
    const policyToken = (await page.inputValue('#sas-url')).split('?')[1]!;
    assert.match(policyToken, /si=writers/);
    const writer = new TableClient(
      base.replace(/\/People$/, ''),
      'People',
      new AzureSASCredential(policyToken),
      clientOptions,
    );
    await writer.createEntity({ partitionKey: 'team-c', rowKey: 'via-sas' });
  });

  test('CORS rules: add and remove; logging and metrics settings are kept', async () => {
    const service = serviceClient(server);
    await service.setProperties({
      logging: { version: '1.0', read: true, write: false, delete: false, retentionPolicy: { enabled: false } },
    });
    await page.click('#cors-open');
    await page.waitForSelector('#cors-add');
    await page.click('#cors-add');
    await page.fill('.cors-rule .cors-AllowedOrigins', 'https://app.example, https://other.example');
    await page.fill('.cors-rule .cors-AllowedMethods', 'GET,PUT');
    await page.fill('.cors-rule .cors-AllowedHeaders', 'x-ms-*');
    await page.fill('.cors-rule .cors-ExposedHeaders', '*');
    await page.fill('.cors-rule .cors-MaxAgeInSeconds', '600');
    await page.click('#cors-save');
    await page.waitForSelector('#status:has-text("CORS rules saved")');
    let properties = await service.getProperties();
    assert.deepEqual(properties.cors, [
      {
        allowedOrigins: 'https://app.example,https://other.example',
        allowedMethods: 'GET,PUT',
        allowedHeaders: 'x-ms-*',
        exposedHeaders: '*',
        maxAgeInSeconds: 600,
      },
    ]);
    assert.equal(properties.logging?.read, true);
    await page.waitForSelector('.cors-rule');
    await page.click('.cors-rule button[aria-label="delete rule"]');
    await page.click('#cors-save');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('.cors-rule').length === 0);
    // The row leaves the page at once; the save that follows may still be on its way to the service.
    const deadlineMs = Date.now() + 60_000;
    for (;;) {
      properties = await service.getProperties();
      if ((properties.cors ?? []).length === 0 || Date.now() > deadlineMs) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(properties.cors ?? [], []);
    assert.equal(properties.logging?.read, true);
  });

  test('keyboard: open a table, the editor, and close it without a mouse', async () => {
    await page.focus('#table-list .table-link[data-table="People"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#page-label:has-text("page 1")');
    await page.focus('#add-entity');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#dialog[open]');
    assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement.id), 'edit-pk');
    await page.keyboard.press('Escape');
    await page.waitForSelector('#dialog', { state: 'hidden' });
    await page.focus('#grid tbody tr:first-child button.edit');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#dialog[open]');
    await page.keyboard.press('Escape');
  });

  test('narrow window and dark mode', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    const layout = await page.evaluate(() => {
      const d = (globalThis as any).document;
      return {
        overflow: d.documentElement.scrollWidth - d.documentElement.clientWidth,
        paneBottom: d.getElementById('tables-pane').getBoundingClientRect().bottom,
        mainTop: d.getElementById('main').getBoundingClientRect().top,
      };
    });
    assert.ok(layout.overflow <= 0, `no sideways scrolling (${layout.overflow}px too wide)`);
    assert.ok(layout.paneBottom <= layout.mainTop + 1, 'the table list sits above the table');
    // Keys stay visible when the grid scrolls sideways.
    const keys = await page.evaluate(() => {
      const d = (globalThis as any).document;
      const wrap = d.getElementById('grid-wrap');
      wrap.scrollLeft = wrap.scrollWidth;
      const row = d.querySelector('#grid tbody tr');
      const left = (name: string) => row.querySelector(`td[data-column="${name}"]`).getBoundingClientRect().left;
      return {
        scrolled: wrap.scrollLeft,
        wrapLeft: wrap.getBoundingClientRect().left,
        pk: left('PartitionKey'),
        rk: left('RowKey'),
      };
    });
    assert.ok(keys.scrolled > 0, 'the People grid is wider than a phone');
    assert.ok(keys.pk >= keys.wrapLeft && keys.rk > keys.pk, `keys pinned: ${JSON.stringify(keys)}`);
    const background = () =>
      page.evaluate(
        () => (globalThis as any).getComputedStyle((globalThis as any).document.body).backgroundColor as string,
      );
    const light = await background();
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await background();
    assert.notEqual(dark, light);
    assert.equal(dark, 'rgb(15, 20, 26)');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test('every configured account can be picked; its key is asked for; a wrong key is refused', async () => {
    const names = await page.$$eval('#account-names option', (options) =>
      options.map((option) => (option as any).value),
    );
    assert.deepEqual(names.sort(), ['devstoreaccount1', 'second1']);
    await page.fill('#account', 'second1');
    await page.dispatchEvent('#account', 'change');
    assert.equal(await page.inputValue('#key'), '', 'no key is known for another account');
    await page.fill('#key', Buffer.from('a wrong key, also 32 bytes long.').toString('base64'));
    await page.click('#connect');
    await page.waitForSelector('#status.error:has-text("403 AuthenticationFailed")');
    assert.equal(
      await page.$$eval('#table-list li', (items) => items.length),
      0,
      "nothing of the other account's tables stays",
    );
    assert.equal(await page.textContent('#main'), 'Connect with the account key to see its tables.');
    await page.fill('#key', secondKey);
    await page.click('#connect');
    await page.waitForSelector('body[data-connected="second1"]');
    await page.fill('#new-table', 'OnSecond');
    await page.click('#create-table');
    await page.waitForSelector('h2:text-is("OnSecond")');
    const second = new TableClient(
      `http://127.0.0.1:${server.port}/second1`,
      'OnSecond',
      new AzureNamedKeyCredential('second1', secondKey),
      clientOptions,
    );
    await second.createEntity({ partitionKey: 'p', rowKey: 'r' });
    await openTable(page, 'OnSecond');
    assert.deepEqual(await gridRowKeys(page), ['r']);
    const devTables: string[] = [];
    for await (const table of serviceClient(server).listTables()) devTables.push(table.name!);
    assert.ok(!devTables.includes('OnSecond'));
    assert.deepEqual(pageErrors, []);
  });
});

async function seed(server: RunningServer): Promise<void> {
  const people = tableClient(server, 'People');
  await people.createTable();
  const rows: [string, string, string, number, string, boolean][] = [
    ['team-a', '0001', 'Ada Lovelace', 36, 'engineering', true],
    ['team-a', '0002', 'Grace Hopper', 85, 'compilers', true],
    ['team-a', '0003', 'Edsger Dijkstra', 72, 'algorithms', false],
    ['team-a', '0004', 'Barbara Liskov', 84, 'languages', true],
    ['team-b', '0001', 'Alan Turing', 41, 'theory', false],
    ['team-b', '0002', 'Katherine Johnson', 101, 'orbits', true],
    ['team-c', '0001', 'Donald Knuth', 86, 'typesetting', true],
  ];
  for (const [partitionKey, rowKey, Name, Age, Topic, Active] of rows) {
    await people.createEntity({
      partitionKey,
      rowKey,
      Name,
      Age,
      Topic,
      Active,
      Joined: new Date(Date.UTC(2020, Age % 12, (Age % 27) + 1)),
      Score: { type: 'Double', value: String(Age / 7) },
      Visits: { type: 'Int64', value: String(BigInt(Age) * 1_000_000_007n) },
    });
  }
  const source = tableClient(server, 'Source');
  await source.createTable();
  for (let batch = 0; batch < 10; batch++) {
    const actions: TableTransaction = new (await import('@azure/data-tables')).TableTransaction();
    for (let i = batch * 100; i < batch * 100 + 100; i++)
      actions.createEntity({ partitionKey: 'bulk', rowKey: `b${String(i).padStart(4, '0')}`, N: i });
    await source.submitTransaction(actions.actions);
  }
  await source.createEntity({
    partitionKey: 'typed',
    rowKey: 't1',
    S: 'a, "quoted"\nvalue',
    I: -2147483648,
    L: { type: 'Int64', value: '9223372036854775807' },
    D: { type: 'Double', value: 'NaN' },
    B: false,
    T: { type: 'DateTime', value: '2024-05-01T12:30:00.1234567Z' },
    G: { type: 'Guid', value: '3f2504e0-4f89-11d3-9a0c-0305e82c3301' },
    X: new Uint8Array([0, 1, 2, 255]),
  });
  await source.createEntity({
    partitionKey: 'typed',
    rowKey: 't2',
    S: ' padded ',
    Flag: true,
    D: { type: 'Double', value: '-Infinity' },
  });
  await source.createEntity({ partitionKey: 'typed', rowKey: 't3' });
}
