/**
 * The operator console page (docs/guides/console-page.md) in headless Chromium, used as an
 * impatient operator would: a token no header can carry, a reload after it, an account opened
 * while another still loads, the audit trail's last page, and a field saved empty.
 */
import test from 'ava';
import type { Page, Route } from 'playwright-core';
import { chromiumForFile } from './_chromium.ts';
import { startConsoleServer, type ConsoleServer } from './_console.ts';

const iso = (text: string): string => `\u2068${text}\u2069`;
const V1 = '/cs-api/v1';
const TOKEN = 'console-operator-token-1';

// A refused call's 4xx is expected, not a page error.
const { openTab } = chromiumForFile(test, { viewport: { width: 1280, height: 1000 } }, (text) => text.startsWith('Failed to load resource'));

/**
 * A console server started with `args` (startConsoleServer's), the player ada logged in, and a
 * tab; `body` runs with them, and all three are closed after it, whatever it did.
 */
async function withAda(args: Parameters<typeof startConsoleServer>, body: (s: ConsoleServer, page: Page) => Promise<void>): Promise<void> {
  const s = await startConsoleServer(...args);
  const client = await s.player('ada');
  const { page } = await openTab();
  try {
    await body(s, page);
  } finally {
    await page.close();
    await client.close().catch(() => undefined);
    await s.stop();
  }
}

test.serial('a wrong token holding a character outside Latin-1 gets the API\'s answer and the sign-in form', async (t) => {
  // console-page.md, Signing in: "A wrong token gets the API's answer, `missing or invalid
  // bearer token`, and the sign-in form again".
  const s = await startConsoleServer(true, { ApiService: { api_service_token: TOKEN } });
  const { page } = await openTab();
  try {
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
    await page.getByLabel('API token').fill('wrong-€');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    t.is(await alert.locator('.message').textContent(), 'missing or invalid bearer token');
  } finally {
    await page.close();
    await s.stop();
  }
});

test.serial('after a wrong token outside Latin-1, reloading the tab still offers the sign-in form', async (t) => {
  // Same promise: the sign-in form again. The tab keeps the token it was given
  // (sessionStorage), so a reload tries it first; it must then ask again, not show a dead page.
  const s = await startConsoleServer(true, { ApiService: { api_service_token: TOKEN } });
  const { page } = await openTab();
  try {
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
    await page.getByLabel('API token').fill('wrong-€');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await page.reload();
    // After the reload the page either asks for the token or shows an error: wait for either.
    await page.getByRole('button', { name: 'Sign in' }).or(page.getByRole('alert')).first().waitFor();
    t.true(await page.getByRole('button', { name: 'Sign in' }).isVisible(), 'the sign-in form after a reload');
  } finally {
    await page.close();
    await s.stop();
  }
});

test.serial('an account opened last stays shown when an account opened before it answers later', async (t) => {
  // An impatient operator opens ada, then adam; ada's answer comes late. The view must show
  // adam, the account last asked for (and whose Ban button the operator is about to use).
  const s = await startConsoleServer(false);
  const { page } = await openTab();
  const clients = [await s.player('ada'), await s.player('adam')];
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  try {
    await page.route(`**${V1}/account/ada/`, async (route: Route) => { await held; await route.continue(); });
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
    await page.getByLabel('Search by').selectOption('name_prefix');
    await page.getByRole('searchbox', { name: 'Search accounts' }).fill('ada');
    await page.getByRole('searchbox').press('Enter');
    const adaAnswer = page.waitForResponse((r) => r.url().endsWith(`${V1}/account/ada/`));
    await page.getByRole('button', { name: 'Open account ada', exact: true }).click();
    await page.getByRole('button', { name: 'Open account adam', exact: true }).click();
    await page.getByRole('heading', { name: `Account ${iso('adam')}` }).waitFor();
    await page.getByRole('table', { name: `${iso('bag')} ${iso('adam')}` }).or(page.getByText(`The ${iso('bag')} ${iso('adam')} is empty.`)).waitFor();
    release();
    await (await adaAnswer).finished();
    // Either ada's late answer is rendered (then it goes on to ask for her characters) or it
    // is dropped; a round trip from the page lets it do whichever it does.
    await Promise.race([
      page.waitForRequest((r) => r.url().includes(`${V1}/account/ada/character/`)),
      page.evaluate('fetch("/console/").then((r) => r.text()).then(() => fetch("/console/")).then((r) => r.text())'),
    ]);
    await page.evaluate('fetch("/console/").then((r) => r.text())');
    t.deepEqual(await page.locator('#account h3').allTextContents(), [`Account ${iso('adam')}`]);
  } finally {
    release();
    await page.close();
    for (const c of clients) await c.close().catch(() => undefined);
    await s.stop();
  }
});

test.serial('the audit trail\'s Next page is off on its last page, by the total the API counts', async (t) => {
  // console-page.md: "`total` is the number of entries kept". With exactly one page of changes,
  // Next must not lead to an empty page that says no change was made.
  await withAda([false], async (s, page) => {
    for (let i = 1; i <= 20; i++) t.is((await s.call('PUT', `${V1}/account/ada/score/${i}/`)).status, 204);
    t.is(((await s.call('GET', `${V1}/audit/`)).body as { total: number }).total, 20);
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/#audit`);
    await page.getByRole('table', { name: 'Changes, newest first' }).waitFor();
    const next = page.getByRole('button', { name: 'Next page of the audit trail' });
    t.true(await next.isDisabled(), 'Next with 20 changes of 20');
    // One more change: a second page with that one.
    t.is((await s.call('PUT', `${V1}/account/ada/score/21/`)).status, 204);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByRole('button', { name: 'Next page of the audit trail' }).and(page.locator(':enabled')).click();
    await page.locator('#audit-table').getByText('page 2', { exact: true }).waitFor();
    t.is(await page.locator('#audit-table tbody tr').count(), 1);
    t.true(await page.getByRole('button', { name: 'Next page of the audit trail' }).isDisabled());
  });
});

test.serial('a field saved empty is refused by the page, which sends nothing', async (t) => {
  // The value travels as a path segment: an empty one would name another route.
  await withAda([true, { ApiService: { api_service_token: TOKEN } }], async (s, page) => {
    const puts: string[] = [];
    page.on('request', (r) => { if (r.method() === 'PUT') puts.push(r.url()); });
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
    await page.getByLabel('API token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Search by').selectOption('name_prefix');
    await page.getByRole('searchbox', { name: 'Search accounts' }).fill('ada');
    await page.getByRole('searchbox').press('Enter');
    await page.getByRole('button', { name: 'Open account ada', exact: true }).click();
    const field = page.locator('#account table.fields input').first();
    const label = await field.getAttribute('aria-label');
    const name = label!.replace(/^Account /, '');
    await field.fill('');
    await page.getByRole('button', { name: `Save ${name}` }).first().click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    t.is(await alert.locator('.message').textContent(), `Type a value for ${iso(name)}: an empty value cannot be saved.`);
    t.false(await page.getByRole('dialog').isVisible());
    t.deepEqual(puts, []);
  });
});

// When calls fail or values cannot travel: what is shown is always the answer to what was asked
// last, a page that failed to load is not skipped, and a value a URL cannot carry is refused.

async function openAda(page: Page, s: ConsoleServer): Promise<void> {
  await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
  await page.getByLabel('Search by').selectOption('name');
  await page.getByRole('searchbox', { name: 'Search accounts' }).fill('ada');
  await page.getByRole('searchbox').press('Enter');
  await page.getByRole('button', { name: 'Open account ada', exact: true }).click();
  await page.getByRole('heading', { name: `Account ${iso('ada')}` }).waitFor();
}

test.serial('saving a nickname of ".." is refused by the page, not sent to another route', async (t) => {
  // console-page.md: "Saving a field sends its value as a path segment, so an empty value is
  // refused by the page … and nothing is sent"; console.md: URL parsers fold `.` and `..`
  // segments. A value of `..` names another route just as an empty one does
  // (PUT /character/<id>/nickname/../ becomes PUT /character/<id>/), so the page refuses it and
  // sends nothing.
  await withAda([true], async (s, page) => {
    const puts: string[] = [];
    page.on('request', (r) => { if (r.method() === 'PUT') puts.push(new URL(r.url()).pathname); });
    await openAda(page, s);
    const field = page.getByRole('textbox', { name: `Character ${iso('ada')} nickname` });
    await field.fill('..');
    await page.getByRole('button', { name: 'Save nickname' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    t.is(await alert.locator('.message').textContent(),
      `${iso('nickname')} cannot be '${iso('..')}' from this page: a URL path reads it as a step between folders.`);
    t.false(await page.getByRole('dialog').isVisible());
    t.deepEqual(puts, []);
  });
});

test.serial('a page of the audit trail that failed to load is not skipped by the next Next', async (t) => {
  // console-page.md: the trail is paged 20 a page with Previous and Next. If loading page 2
  // fails (here a 503 GSF_ERR_UNAVAILABLE, as a handler's UNAVAILABLE status answers), the page
  // still shows page 1, and Next again asks for page 2 (page_no=1), not page 3.
  await withAda([false], async (s, page) => {
    let failOnce = true;
    const asked: string[] = [];
    for (let i = 1; i <= 50; i++) t.is((await s.call('PUT', `${V1}/account/ada/score/${i}/`)).status, 204);
    await page.route(`**${V1}/audit/?*`, async (route: Route) => {
      const pageNo = new URL(route.request().url()).searchParams.get('page_no')!;
      asked.push(pageNo);
      if (pageNo === '1' && failOnce) {
        failOnce = false;
        await route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: 'GSF_ERR_UNAVAILABLE', message: 'server busy' }) });
        return;
      }
      await route.continue();
    });
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/#audit`);
    await page.getByRole('table', { name: 'Changes, newest first' }).waitFor();
    await page.getByRole('button', { name: 'Next page of the audit trail' }).click();
    await page.getByRole('alert').getByText('server busy').waitFor();
    t.is(await page.locator('#audit-table .pager .muted').textContent(), 'page 1');
    await page.getByRole('button', { name: 'Next page of the audit trail' }).click();
    await page.locator('#audit-table').getByText('page 2', { exact: true }).waitFor();
    t.is(await page.locator('#audit-table .pager .muted').textContent(), 'page 2');
    t.deepEqual(asked, ['0', '1', '1']);
  });
});

test.serial('a custom query that fails no longer shows the previous answer', async (t) => {
  // console-page.md: "Custom queries: … its answer is shown as a table"; "Errors are the API's
  // words". Running "Player score" for ada, then for a name with no account: the 404 is shown,
  // and the table under the form no longer shows ada's score as if it were the answer.
  await withAda([true], async (s, page) => {
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/#live`);
    const form = page.getByRole('form', { name: 'Player score' });
    await page.getByRole('textbox', { name: 'Player score: name' }).fill('ada');
    await page.getByRole('button', { name: 'Run Player score' }).click();
    await form.getByRole('cell', { name: 'ada', exact: true }).waitFor();
    await page.getByRole('textbox', { name: 'Player score: name' }).fill('nobody');
    await page.getByRole('button', { name: 'Run Player score' }).click();
    await page.getByRole('alert').getByText("no account 'nobody'").waitFor();
    t.is(await form.getByRole('cell', { name: 'ada', exact: true }).count(), 0, "ada's answer still shown under the failed query for 'nobody'");
  });
});

test.serial('a search that failed does not say it searched, nor show the previous results as its own', async (t) => {
  // console-page.md: "Only what was asked for last is shown". A search for grace that fails
  // (a 503 GSF_ERR_UNAVAILABLE, as a handler's UNAVAILABLE status answers) leaves neither ada's
  // results nor a status line saying it searched.
  await withAda([true], async (s, page) => {
    await page.route(`**${V1}/account/search/?*value=grace*`, (route: Route) => route.fulfill({
      status: 503, contentType: 'application/json', body: JSON.stringify({ error: 'GSF_ERR_UNAVAILABLE', message: 'server busy' }),
    }));
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
    await page.getByLabel('Search by').selectOption('name');
    await page.getByRole('searchbox', { name: 'Search accounts' }).fill('ada');
    await page.getByRole('searchbox').press('Enter');
    await page.getByRole('button', { name: 'Open account ada', exact: true }).waitFor();
    await page.getByRole('status').getByText(`Searched accounts where ${iso('name')} is '${iso('ada')}'.`).waitFor();
    await page.getByRole('searchbox', { name: 'Search accounts' }).fill('grace');
    await page.getByRole('searchbox').press('Enter');
    await page.getByRole('alert').getByText('server busy').waitFor();
    await page.waitForFunction('document.getElementById("status").textContent === ""');
    t.is(await page.getByRole('button', { name: 'Open account ada', exact: true }).count(), 0, "ada's results still shown after the search for grace failed");
  });
});

test.serial('after a delete refused because the bag changed, the bag shows what it now holds', async (t) => {
  // console-page.md: Delete "sends the quantity on screen as expected_quantity (a bag that
  // changed meanwhile answers 409 and nothing is taken)". After that 409 the bag is loaded again,
  // so that a retry sends what it now holds.
  await withAda([true], async (s, page) => {
    const gift = (n: number) => s.call('POST', `${V1}/item/gift/`, { target_type: 'account', title: 't', content: 'c', expires: '2030-01-01T00:00:00Z', items: [{ item_id: 'gem', quantity: n }], users: ['ada'] });
    t.is((await gift(2)).status, 204);
    await openAda(page, s);
    const bag = page.getByRole('table', { name: `${iso('bag')} ${iso('ada')}` });
    await bag.getByRole('cell', { name: 'gem', exact: true }).waitFor();
    t.deepEqual(await bag.locator('tbody td').allTextContents(), ['gem', 'Gem', '2', 'Delete']);
    t.is((await gift(3)).status, 204);
    await page.getByRole('button', { name: 'Delete gem' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('alert').waitFor();
    t.is(await page.getByRole('alert').locator('.code').textContent(), '(GSF_ERR_CONFLICT, HTTP 409)');
    await bag.getByRole('cell', { name: '5', exact: true }).waitFor();
    t.deepEqual(await bag.locator('tbody td').allTextContents(), ['gem', 'Gem', '5', 'Delete']);
  });
});
