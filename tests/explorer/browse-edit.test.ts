// The explorer in a real Chromium against a real server on disk: tables, the grid and
// its paging, the query builder and plans, the typed editor with If-Match, hostile data, and where
// the key may and may not go. One browser and one page for the whole file.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, browserTimeoutMs, launchBrowser } from '../helpers/browser.js';
import { gridColumns, gridRowKeys, openExplorer, openTable, runQuery, typedEntity } from '../helpers/explorer.js';
import { serviceClient, tableClient } from '../helpers/sdk.js';
import { devKey, startServer, type RunningServer } from '../helpers/server.js';

const everyType = {
  S: ['Edm.String', 'héllo, "world"\nline two'],
  I: ['Edm.Int32', '-2147483648'],
  L: ['Edm.Int64', '9223372036854775807'],
  D: ['Edm.Double', '0.1'],
  DN: ['Edm.Double', 'NaN'],
  DP: ['Edm.Double', 'Infinity'],
  DM: ['Edm.Double', '-Infinity'],
  B: ['Edm.Boolean', 'false'],
  T: ['Edm.DateTime', '2024-05-01T12:30:00.1234567Z'],
  G: ['Edm.Guid', '3f2504e0-4f89-11d3-9a0c-0305e82c3301'],
  X: ['Edm.Binary', 'AAEC/w=='],
} as const;

/** What the service sends back for each (JSON value as parsed). */
const everyTypeWire: Record<string, [string, unknown]> = {
  S: ['Edm.String', 'héllo, "world"\nline two'],
  I: ['Edm.Int32', -2147483648],
  L: ['Edm.Int64', '9223372036854775807'],
  D: ['Edm.Double', 0.1],
  DN: ['Edm.Double', 'NaN'],
  DP: ['Edm.Double', 'Infinity'],
  DM: ['Edm.Double', '-Infinity'],
  B: ['Edm.Boolean', false],
  T: ['Edm.DateTime', '2024-05-01T12:30:00.1234567Z'],
  G: ['Edm.Guid', '3f2504e0-4f89-11d3-9a0c-0305e82c3301'],
  X: ['Edm.Binary', 'AAEC/w=='],
};

describe('explorer in Chromium: tables, grid, query, editor', { skip: browserSkip() }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let confirmAnswer = true;
  const pageErrors: string[] = [];

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(browserTimeoutMs);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('dialog', (dialog) => void (confirmAnswer ? dialog.accept() : dialog.dismiss()));
    const paging = tableClient(server, 'Paging');
    await paging.createTable();
    for (let i = 0; i < 12; i++) {
      const odd = i % 2 === 1;
      await paging.createEntity({
        partitionKey: 'p',
        rowKey: `r${String(i).padStart(2, '0')}`,
        Num: (i * 7) % 12,
        ...(odd ? { Odd: 1 } : { Even: true }),
      });
    }
    await openExplorer(page, server);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('connects to the development account with its key pre-filled', async () => {
    assert.equal(await page.getAttribute('body', 'data-connected'), 'devstoreaccount1');
    assert.equal(await page.inputValue('#account'), 'devstoreaccount1');
    assert.equal(await page.inputValue('#key'), devKey);
    assert.equal(await page.getAttribute('#key', 'type'), 'password');
  });

  test('tables: create, filter by prefix, delete only after confirming', async () => {
    for (const name of ['Alpha1', 'Beta1']) {
      await page.fill('#new-table', name);
      await page.click('#create-table');
      await page.waitForSelector(`h2:text-is("${name}")`);
    }
    await page.fill('#table-filter', 'Al');
    await page.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('#table-list .table-link').length === 1,
    );
    assert.equal(await page.textContent('#table-list .table-link'), 'Alpha1');
    await page.fill('#table-filter', '');
    await page.waitForSelector('#table-list .table-link[data-table="Beta1"]');
    confirmAnswer = false;
    await page.click('button[aria-label="Delete table Beta1"]');
    confirmAnswer = true;
    assert.ok(await page.$('#table-list .table-link[data-table="Beta1"]'), 'still there after Cancel');
    await page.click('button[aria-label="Delete table Beta1"]');
    await page.waitForSelector('#table-list .table-link[data-table="Beta1"]', { state: 'detached' });
    const names: string[] = [];
    for await (const table of serviceClient(server).listTables()) names.push(table.name!);
    assert.deepEqual(names.sort(), ['Alpha1', 'Paging']);
  });

  test('grid: pages follow continuations ($top=5 over 12), union of properties, EDM types, columns, sort', async () => {
    await openTable(page, 'Paging');
    await runQuery(page, { top: '5' });
    assert.match((await page.textContent('#page-label'))!, /page 1 · 5 entities · more follow/);
    assert.deepEqual(await gridRowKeys(page), ['r00', 'r01', 'r02', 'r03', 'r04']);
    assert.ok(await page.isDisabled('#page-previous'));
    await page.click('#page-next');
    await page.waitForSelector('#page-label:has-text("page 2")');
    assert.deepEqual(await gridRowKeys(page), ['r05', 'r06', 'r07', 'r08', 'r09']);
    await page.click('#page-next');
    await page.waitForSelector('#page-label:has-text("page 3")');
    assert.deepEqual(await gridRowKeys(page), ['r10', 'r11']);
    assert.ok(await page.isDisabled('#page-next'), 'no continuation after the last page');
    await page.click('#page-previous');
    await page.waitForSelector('#page-label:has-text("page 2")');
    assert.deepEqual(await gridRowKeys(page), ['r05', 'r06', 'r07', 'r08', 'r09']);
    await page.click('#page-first');
    await page.waitForSelector('#page-label:has-text("page 1")');
    assert.deepEqual(await gridRowKeys(page), ['r00', 'r01', 'r02', 'r03', 'r04']);

    assert.deepEqual(await gridColumns(page), ['PartitionKey', 'RowKey', 'Timestamp', 'Num', 'Even', 'Odd']);
    assert.equal(await page.textContent('tr[data-rk="r01"] td[data-column="Odd"] .type'), 'Int32');
    assert.equal(await page.textContent('tr[data-rk="r00"] td[data-column="Even"] .type'), 'Boolean');
    assert.equal(await page.textContent('tr[data-rk="r00"] td[data-column="Timestamp"] .type'), 'DateTime');
    assert.equal(await page.textContent('tr[data-rk="r00"] td[data-column="Odd"]'), '', 'absent property: empty cell');

    await page.click('#columns-button');
    await page.uncheck('.chooser-list input[data-column="Odd"]');
    assert.deepEqual(await gridColumns(page), ['PartitionKey', 'RowKey', 'Timestamp', 'Num', 'Even']);
    await page.check('.chooser-list input[data-column="Odd"]');
    await page.click('#columns-button');
    assert.ok((await gridColumns(page)).includes('Odd'));

    // Num on page 1 is 0, 7, 2, 9, 4: numeric order, not text order, within the page only.
    await page.click('#grid .sort[data-column="Num"]');
    assert.deepEqual(await gridRowKeys(page), ['r00', 'r02', 'r04', 'r01', 'r03']);
    await page.click('#grid .sort[data-column="Num"]');
    assert.deepEqual(await gridRowKeys(page), ['r03', 'r01', 'r04', 'r02', 'r00']);
    assert.equal(await page.getAttribute('#grid th[aria-sort]', 'aria-sort'), 'descending');
  });

  test('query: builder with typed literals and and/or, Timestamp presets, raw $filter, $select, the plan explained', async () => {
    await openTable(page, 'Paging');
    await page.click('#add-condition');
    await page.fill('.condition:nth-child(1) .value', 'p');
    await page.click('#add-condition');
    await page.fill('.condition:nth-child(2) .property', 'Num');
    await page.selectOption('.condition:nth-child(2) .comparison', 'ge');
    await page.selectOption('.condition:nth-child(2) .type', 'Edm.Int32');
    await page.fill('.condition:nth-child(2) .value', '9');
    await page.click('#apply-builder');
    await page.waitForFunction(() => (globalThis as any).document.getElementById('filter').value !== '');
    assert.equal(await page.inputValue('#filter'), "PartitionKey eq 'p' and Num ge 9");
    await page.waitForSelector('#plan:has-text("partition-scan")');
    assert.deepEqual(await gridRowKeys(page), ['r03', 'r05', 'r10']);
    assert.match((await page.textContent('#plan'))!, /plan: partition-scan · read 12 · returned 3 · time \d+ ms/);
    assert.match((await page.textContent('#plan-note'))!, /Partition scan: reads every entity of the partition/);

    // An `or` starts a new group: (PK and Num) or Odd.
    await page.click('#add-condition');
    await page.selectOption('.condition:nth-child(3) .join', 'or');
    await page.fill('.condition:nth-child(3) .property', 'Odd');
    await page.selectOption('.condition:nth-child(3) .type', 'Edm.Int32');
    await page.fill('.condition:nth-child(3) .value', '1');
    await page.click('#apply-builder');
    await page.waitForSelector('#plan:has-text("table-scan")');
    assert.equal(await page.inputValue('#filter'), "(PartitionKey eq 'p' and Num ge 9) or Odd eq 1");
    assert.deepEqual(await gridRowKeys(page), ['r01', 'r03', 'r05', 'r07', 'r09', 'r10', 'r11']);
    assert.match(
      (await page.textContent('#plan-note'))!,
      /Table scan: reads every partition.*Add a PartitionKey condition.*secondary index/,
    );
    assert.equal(await page.getAttribute('#plan', 'class'), 'plan costly');

    // A value that is not of its type is refused before anything is sent.
    await page.fill('.condition:nth-child(3) .value', '1.5');
    await page.click('#apply-builder');
    assert.match((await page.textContent('#builder-error'))!, /1\.5 is not Edm\.Int32/);

    await page.click('#clear-query');
    await page.click('text=Timestamp: last hour');
    await page.waitForSelector('#page-label:has-text("12 entities")');
    assert.match(await page.inputValue('#filter'), /^Timestamp ge datetime'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z'$/);

    await runQuery(page, { filter: "PartitionKey eq 'p' and RowKey ge 'r10'", select: 'Num' });
    assert.deepEqual(await gridColumns(page), ['PartitionKey', 'RowKey', 'Timestamp', 'Num']);
    assert.match((await page.textContent('#plan'))!, /plan: range/);
  });

  test("query: the builder's literals of every EDM type, from the page's own module", async () => {
    const literals = await page.evaluate(async () => {
      const { literal } = await import(`${(globalThis as any).location.href}filter.js`);
      return [
        literal('Edm.String', "O'Brien"),
        literal('Edm.Int32', '-5'),
        literal('Edm.Int64', '9223372036854775807'),
        literal('Edm.Double', '2'),
        literal('Edm.Double', '1e-9'),
        literal('Edm.Boolean', 'true'),
        literal('Edm.DateTime', '2024-05-01T12:30:00.1234567Z'),
        literal('Edm.Guid', '3f2504e0-4f89-11d3-9a0c-0305e82c3301'),
        literal('Edm.Binary', 'AAEC/w=='),
      ];
    });
    assert.deepEqual(literals, [
      "'O''Brien'",
      '-5',
      '9223372036854775807L',
      '2.0',
      '1e-9',
      'true',
      "datetime'2024-05-01T12:30:00.1234567Z'",
      "guid'3f2504e0-4f89-11d3-9a0c-0305e82c3301'",
      "X'000102ff'",
    ]);
  });

  test('editor: every EDM type round-trips exactly', async () => {
    await page.fill('#new-table', 'Typed');
    await page.click('#create-table');
    await page.waitForSelector('#no-entities');
    await page.click('#add-entity');
    await page.fill('#edit-pk', 'k');
    await page.fill('#edit-rk', '1');
    for (const [name, [type, text]] of Object.entries(everyType)) {
      await page.click('#add-property');
      const row = '.property-row:last-child';
      await page.fill(`${row} .prop-name`, name);
      await page.selectOption(`${row} .prop-type`, type);
      if (type === 'Edm.Boolean') await page.selectOption(`${row} .prop-value`, text);
      else await page.fill(`${row} .prop-value`, text);
    }
    await page.click('#edit-save');
    await page.waitForSelector('#grid tr[data-rk="1"]');
    assert.deepEqual(await typedEntity(server, 'Typed', 'k', '1'), everyTypeWire);
    for (const [name, [type, text]] of Object.entries(everyType)) {
      assert.equal(await page.textContent(`tr[data-rk="1"] td[data-column="${name}"] .type`), type.slice(4), name);
      assert.equal(await page.getAttribute(`tr[data-rk="1"] td[data-column="${name}"]`, 'title'), text, name);
    }

    // The editor shows what it loaded; saving unchanged (replace) keeps every value and type.
    await page.click('tr[data-rk="1"] button.edit');
    await page.waitForSelector('#dialog[open]');
    assert.equal(await page.inputValue('.property-row:nth-child(3) .prop-value'), '9223372036854775807');
    await page.click('#edit-save');
    await page.waitForSelector('#dialog', { state: 'hidden' });
    assert.deepEqual(await typedEntity(server, 'Typed', 'k', '1'), everyTypeWire);
  });

  test('editor: invalid values are refused before sending; the typed values are found by typed literals', async () => {
    const invalid: [string, string, RegExp][] = [
      ['Edm.Int32', '2147483648', /out of Int32 range/],
      ['Edm.Int32', '1.5', /whole number/],
      ['Edm.Int64', '9223372036854775808', /out of Int64 range/],
      ['Edm.Int64', '12.5', /whole number/],
      ['Edm.Double', '1e400', /too large/],
      ['Edm.Double', 'nan', /NaN, Infinity/],
      ['Edm.Guid', '3f2504e0-4f89-11d3-9a0c-0305e82c330', /GUID/],
      ['Edm.DateTime', '2024-05-01T12:30:00.12345678Z', /7 fractional digits/],
      ['Edm.DateTime', '2024-02-30T00:00:00Z', /not a real date/],
      ['Edm.DateTime', '2024-05-01 12:30:00', /ISO 8601/],
      ['Edm.Binary', 'AAE', /base64/],
    ];
    await page.click('#add-entity');
    await page.fill('#edit-pk', 'k');
    await page.fill('#edit-rk', 'bad');
    await page.click('#add-property');
    await page.fill('.property-row .prop-name', 'V');
    for (const [type, text, reason] of invalid) {
      await page.selectOption('.property-row .prop-type', type);
      await page.fill('.property-row .prop-value', text);
      await page.click('#edit-save');
      assert.match((await page.textContent('.property-row .prop-error'))!, reason, `${type} ${text}`);
      assert.match((await page.textContent('#edit-message'))!, /nothing was sent/);
    }
    await page.fill('.property-row .prop-name', '1st');
    await page.click('#edit-save');
    assert.match((await page.textContent('.property-row .prop-error'))!, /not starting with a digit/);
    await page.keyboard.press('Escape');
    assert.equal(await typedEntity(server, 'Typed', 'k', 'bad'), undefined, 'nothing was inserted');

    // Queries on the typed values find the entity: Int64 and Guid literals from the builder.
    await page.click('#add-condition');
    await page.fill('.condition:nth-child(1) .property', 'L');
    await page.selectOption('.condition:nth-child(1) .type', 'Edm.Int64');
    await page.fill('.condition:nth-child(1) .value', '9223372036854775807');
    await page.click('#add-condition');
    await page.fill('.condition:nth-child(2) .property', 'G');
    await page.selectOption('.condition:nth-child(2) .type', 'Edm.Guid');
    await page.fill('.condition:nth-child(2) .value', '3f2504e0-4f89-11d3-9a0c-0305e82c3301');
    await page.click('#apply-builder');
    await page.waitForSelector('#page-label:has-text("1 entity")');
    await page.click('#clear-query');
  });

  test('editor: replace drops removed properties, merge keeps them', async () => {
    await openTable(page, 'Typed');
    await page.click('tr[data-rk="1"] button.edit');
    await page.waitForSelector('#dialog[open]');
    await page.click('.property-row:has(.prop-name[value="S"]) button[aria-label="remove property"]');
    await page.selectOption('#edit-mode', 'replace');
    await page.click('#edit-save');
    await page.waitForSelector('#dialog', { state: 'hidden' });
    const replaced = (await typedEntity(server, 'Typed', 'k', '1'))!;
    assert.equal(replaced['S'], undefined);
    assert.deepEqual(replaced['L'], everyTypeWire['L']);

    await page.click('tr[data-rk="1"] button.edit');
    await page.waitForSelector('#dialog[open]');
    await page.click('.property-row:has(.prop-name[value="L"]) button[aria-label="remove property"]');
    await page.fill('.property-row:has(.prop-name[value="I"]) .prop-value', '2147483647');
    await page.selectOption('#edit-mode', 'merge');
    await page.click('#edit-save');
    await page.waitForSelector('#dialog', { state: 'hidden' });
    const merged = (await typedEntity(server, 'Typed', 'k', '1'))!;
    assert.deepEqual(merged['L'], everyTypeWire['L'], 'merge keeps what the form left out');
    assert.deepEqual(merged['I'], ['Edm.Int32', 2147483647]);
  });

  test('a change made meanwhile answers 412: nothing is overwritten, and the editor reloads the current version', async () => {
    await openTable(page, 'Typed');
    await page.click('tr[data-rk="1"] button.edit');
    await page.waitForSelector('#dialog[open]');
    await tableClient(server, 'Typed').updateEntity({ partitionKey: 'k', rowKey: '1', I: 7 }, 'Merge');
    await page.fill('.property-row:has(.prop-name[value="I"]) .prop-value', '8');
    await page.click('#edit-save');
    await page.waitForSelector('#edit-message:has-text("412")');
    assert.match((await page.textContent('#edit-message'))!, /changed by someone else.*Nothing was written/);
    assert.deepEqual((await typedEntity(server, 'Typed', 'k', '1'))!['I'], ['Edm.Int32', 7]);
    await page.click('#edit-reload');
    await page.waitForSelector('#edit-message:has-text("Reloaded")');
    assert.equal(await page.inputValue('.property-row:has(.prop-name[value="I"]) .prop-value'), '7');
    await page.fill('.property-row:has(.prop-name[value="I"]) .prop-value', '9');
    await page.click('#edit-save');
    await page.waitForSelector('#dialog', { state: 'hidden' });
    assert.deepEqual((await typedEntity(server, 'Typed', 'k', '1'))!['I'], ['Edm.Int32', 9]);
  });

  test('delete an entity after confirming', async () => {
    await tableClient(server, 'Typed').createEntity({ partitionKey: 'k', rowKey: 'gone' });
    await openTable(page, 'Typed');
    confirmAnswer = false;
    await page.click('tr[data-rk="gone"] button.delete');
    confirmAnswer = true;
    assert.ok(await typedEntity(server, 'Typed', 'k', 'gone'));
    await page.click('tr[data-rk="gone"] button.delete');
    await page.waitForSelector('tr[data-rk="gone"]', { state: 'detached' });
    assert.equal(await typedEntity(server, 'Typed', 'k', 'gone'), undefined);
  });

  test('hostile keys and values are shown as text and run nothing', async () => {
    const hostile = tableClient(server, 'Hostile');
    await hostile.createTable();
    const values = {
      partitionKey: '<img src=x onerror="window.__pwned=1">',
      // Keys cannot hold '/', values can.
      rowKey: '"><script>window.__pwned=2<',
      Html: '<img src=x onerror=window.__pwned=3></script><script>window.__pwned=6</script>',
      Markup: '<b onmouseover=window.__pwned=4>bold</b><svg onload=window.__pwned=5></svg>',
    };
    await hostile.createEntity(values);
    await page.reload();
    await page.waitForSelector('body[data-connected]');
    await openTable(page, 'Hostile');
    await page.hover('#grid tbody td[data-column="Markup"]');
    assert.equal(await page.textContent('td[data-column="PartitionKey"] .value'), values.partitionKey);
    assert.equal(await page.textContent('td[data-column="RowKey"] .value'), values.rowKey);
    assert.equal(await page.textContent('td[data-column="Html"] .value'), values.Html);
    assert.equal(await page.textContent('td[data-column="Markup"] .value'), values.Markup);
    await page.click('#grid tbody button.edit');
    await page.waitForSelector('#dialog[open]');
    assert.equal(await page.inputValue('#edit-pk'), values.partitionKey);
    assert.equal(await page.inputValue('.property-row:has(.prop-name[value="Html"]) .prop-value'), values.Html);
    await page.keyboard.press('Escape');
    const found = await page.evaluate(() => ({
      pwned: (globalThis as any).__pwned,
      elements: (globalThis as any).document.querySelectorAll('main img, main script, main svg, main b').length,
    }));
    assert.deepEqual(found, { pwned: undefined, elements: 0 });
    assert.deepEqual(pageErrors, []);

    // Even markup that did reach the page could not run: the CSP refuses inline script.
    const inline = await page.evaluate(
      () =>
        new Promise<{ directive: string; ran: unknown }>((resolve) => {
          const g = globalThis as any;
          g.document.addEventListener(
            'securitypolicyviolation',
            (event: any) => resolve({ directive: event.effectiveDirective, ran: g.__inline }),
            { once: true },
          );
          const script = g.document.createElement('script');
          script.textContent = 'window.__inline = 1';
          g.document.body.appendChild(script);
          setTimeout(() => resolve({ directive: 'no violation reported', ran: g.__inline }), 30_000);
        }),
    );
    assert.deepEqual(inline, { directive: 'script-src-elem', ran: undefined });
  });

  test('the key stays in this tab: never in the URL, local storage, cookies or the server log', async () => {
    const stored = await page.evaluate(() => {
      const g = globalThis as any;
      return {
        url: g.location.href,
        local: g.localStorage.length,
        cookie: g.document.cookie,
        session: JSON.stringify(g.sessionStorage),
      };
    });
    assert.equal(stored.local, 0);
    assert.equal(stored.cookie, '');
    assert.ok(stored.session.includes(devKey), 'kept in sessionStorage for this tab');
    for (const form of [devKey, encodeURIComponent(devKey)]) {
      assert.ok(!stored.url.includes(form) && !page.url().includes(form));
      assert.ok(!server.output().stderr.includes(form), 'not in the log');
    }
  });
});
