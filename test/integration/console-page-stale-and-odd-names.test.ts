/**
 * The console page with names players choose and answers that come late
 * (docs/guides/console-page.md): a name's own bidi controls cannot reach the page's words, an id
 * holding a comma is gifted as itself, and an answer for something no longer asked for (an
 * older search, an account opened before another) is dropped, its failure included.
 */
import test from 'ava';
import type { Route } from 'playwright-core';
import type { GsfClient } from '../../src/sdk/index.ts';
import { chromiumForFile, readsLeftToRight } from './_chromium.ts';
import { startConsoleServer } from './_console.ts';

const V1 = '/cs-api/v1';
const { openTab } = chromiumForFile(test, { viewport: { width: 1280, height: 1000 } }, (text) => text.startsWith('Failed to load resource'));
const iso = (s: string): string => `\u2068${s}\u2069`;

/** A request held until the test answers it, as a slow server would. */
function holdOne(): { held: Promise<Route>; hold(r: Route): void } {
  let hold!: (r: Route) => void;
  const held = new Promise<Route>((resolve) => { hold = resolve; });
  return { held, hold };
}

declare const document: { body: { dataset: Record<string, string | undefined> } };

test.serial('a name that closes the isolate and overrides the direction shows its controls and leaves the page\'s words alone', async (t) => {
  const s = await startConsoleServer(false);
  const name = '\u2069\u202Eevil';
  const clients: GsfClient[] = [];
  const { page } = await openTab();
  try {
    clients.push(await s.player(name));
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
    await page.getByLabel('Search by').selectOption('name');
    await page.getByRole('searchbox', { name: 'Search accounts' }).fill(name);
    await page.getByRole('searchbox').press('Enter');
    await page.getByRole('button', { name: `Open account ${name}`, exact: true }).click();
    await page.getByRole('button', { name: 'Ban', exact: true }).click();
    await page.getByRole('dialog').waitFor();
    t.is(await page.locator('#confirm-text').textContent(),
      `Ban account ${iso('<U+2069><U+202E>evil')}? Their session is closed and they cannot log in until reinstated.`);
    t.true(await readsLeftToRight(page, '#confirm-text', 'Their session is closed'));
    t.true(await readsLeftToRight(page, '#status', "'."));
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  } finally {
    await page.close();
    for (const c of clients) await c.close().catch(() => undefined);
    await s.stop();
  }
});

test.serial('a gift to ids one per line reaches an account whose id holds a comma, and no other', async (t) => {
  const s = await startConsoleServer(false);
  const clients: GsfClient[] = [];
  const { page } = await openTab();
  try {
    clients.push(await s.player('ann'), await s.player('bob'), await s.player('ann,bob'), await s.player('cy'));
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
    await page.getByRole('link', { name: 'Live operations' }).click();
    await page.getByLabel('Ids, one per line').fill('ann,bob\ncy\n');
    await page.getByLabel('Title', { exact: true }).fill('Sorry');
    await page.getByLabel('Content').fill('For the downtime');
    await page.getByLabel('Quantity of Gem').fill('2');
    await page.getByRole('button', { name: 'Send gift', exact: true }).click();
    t.is(await page.locator('#confirm-text').textContent(), `Gift ${iso('2')} ${iso('gem')} to ${iso('account')}(s) ${iso('ann,bob')}, ${iso('cy')}?`);
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('status').getByText(/^Gift sent/).waitFor();
    const bag = async (name: string): Promise<unknown> => (await s.call('GET', `${V1}/characer/bag/${encodeURIComponent(name)}/`)).body;
    const gems = [{ item_id: 'gem', name: 'Gem', quantity: 2 }];
    t.deepEqual({ 'ann,bob': await bag('ann,bob'), cy: await bag('cy'), ann: await bag('ann'), bob: await bag('bob') },
      { 'ann,bob': gems, cy: gems, ann: [], bob: [] });
  } finally {
    await page.close();
    for (const c of clients) await c.close().catch(() => undefined);
    await s.stop();
  }
});

test.serial('an older search that fails after a newer one was shown leaves the newer results and no error', async (t) => {
  const s = await startConsoleServer(false);
  const clients: GsfClient[] = [];
  const { page } = await openTab();
  try {
    clients.push(await s.player('ada'));
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
    await page.getByRole('searchbox', { name: 'Search accounts' }).waitFor();
    await page.getByLabel('Search by').selectOption('name');
    const slow = holdOne();
    await page.route((url) => url.pathname === '/cs-api/v1/account/search/' && url.searchParams.get('value') === 'zed', (r) => slow.hold(r));
    await page.getByRole('searchbox').fill('zed');
    await page.getByRole('searchbox').press('Enter');
    const held = await slow.held;
    await page.getByRole('searchbox').fill('ada');
    await page.getByRole('searchbox').press('Enter');
    await page.getByRole('button', { name: 'Open account ada', exact: true }).waitFor();
    await held.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: 'GSF_ERR_INTERNAL', message: 'late failure of the older search' }) });
    await page.waitForFunction(() => document.body.dataset.dropped === '1');
    t.false(await page.locator('#error').isVisible());
    t.is(await page.locator('#search-results button').first().textContent(), 'ada');
  } finally {
    await page.close();
    for (const c of clients) await c.close().catch(() => undefined);
    await s.stop();
  }
});

test.serial('an account opened before another, whose answer fails late, leaves the later account and no error', async (t) => {
  const s = await startConsoleServer(false);
  const clients: GsfClient[] = [];
  const { page } = await openTab();
  try {
    clients.push(await s.player('ada'), await s.player('adam'));
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
    await page.getByRole('searchbox', { name: 'Search accounts' }).waitFor();
    await page.getByLabel('Search by').selectOption('name_prefix');
    await page.getByRole('searchbox').fill('ada');
    await page.getByRole('searchbox').press('Enter');
    await page.getByRole('button', { name: 'Open account adam', exact: true }).waitFor();
    const slow = holdOne();
    await page.route((url) => url.pathname === '/cs-api/v1/account/ada/', (r) => slow.hold(r));
    await page.getByRole('button', { name: 'Open account ada', exact: true }).click();
    const held = await slow.held;
    await page.getByRole('button', { name: 'Open account adam', exact: true }).click();
    await page.locator('#account-title').getByText('adam').waitFor();
    await held.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ error: 'GSF_ERR_NOT_FOUND', message: "no account 'ada'" }) });
    await page.waitForFunction(() => document.body.dataset.dropped === '1');
    t.false(await page.locator('#error').isVisible());
    t.is(await page.locator('#account-title').textContent(), `Account ${iso('adam')}`);
  } finally {
    await page.close();
    for (const c of clients) await c.close().catch(() => undefined);
    await s.stop();
  }
});
