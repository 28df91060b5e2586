/**
 * The operator console page (docs/guides/console-page.md) in headless Chromium, used as an
 * impatient operator would: a token no header can carry, a reload after it, an account opened
 * while another still loads, the audit trail's last page, and a field saved empty.
 */
import test from 'ava';
import type { Route } from 'playwright-core';
import { chromiumForFile } from './_chromium.ts';
import { startConsoleServer } from './_console.ts';

const iso = (text: string): string => `\u2068${text}\u2069`;
const V1 = '/cs-api/v1';
const TOKEN = 'console-operator-token-1';

// A refused call's 4xx is expected, not a page error.
const { openTab } = chromiumForFile(test, { viewport: { width: 1280, height: 1000 } }, (text) => text.startsWith('Failed to load resource'));

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
  const s = await startConsoleServer(false);
  const client = await s.player('ada');
  const { page } = await openTab();
  try {
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
  } finally {
    await page.close();
    await client.close().catch(() => undefined);
    await s.stop();
  }
});

test.serial('a field saved empty is refused by the page, which sends nothing', async (t) => {
  // The value travels as a path segment: an empty one would name another route.
  const s = await startConsoleServer(true, { ApiService: { api_service_token: TOKEN } });
  const client = await s.player('ada');
  const { page } = await openTab();
  const puts: string[] = [];
  page.on('request', (r) => { if (r.method() === 'PUT') puts.push(r.url()); });
  try {
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
  } finally {
    await page.close();
    await client.close().catch(() => undefined);
    await s.stop();
  }
});
