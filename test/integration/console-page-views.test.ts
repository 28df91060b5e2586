/**
 * The console page (docs/guides/console-page.md) in headless Chromium against the arena's
 * managed console half: after an operator moved on to another account, a late failure of the
 * first one's loads is not shown over it, and a late change of the first one does not bring it
 * back; after a refused change the status line no longer claims an earlier success.
 */
import test from 'ava';
import type { Page, Route } from 'playwright-core';
import type { GsfClient } from '../../src/sdk/index.ts';
import { chromiumForFile } from './_chromium.ts';
import { startConsoleServer, type ConsoleServer } from './_console.ts';

const V1 = '/cs-api/v1';
const iso = (s: string): string => `\u2068${s}\u2069`;
// A refused call's 4xx/5xx is expected, not a page error.
const { openTab } = chromiumForFile(test, { viewport: { width: 1280, height: 1000 } }, (text) => text.startsWith('Failed to load resource'));

/** A request held until the test answers it, as a slow server would. */
function holdOne(): { held: Promise<Route>; hold(r: Route): void } {
  let hold!: (r: Route) => void;
  const held = new Promise<Route>((resolve) => { hold = resolve; });
  return { held, hold };
}

/** The managed console, players `names` logged in, a tab; all closed after `body`. */
async function withPlayers(names: string[], body: (s: ConsoleServer, page: Page, errors: string[]) => Promise<void>): Promise<void> {
  const s = await startConsoleServer(true);
  const clients: GsfClient[] = [];
  const { page, errors } = await openTab();
  try {
    for (const n of names) clients.push(await s.player(n));
    await body(s, page, errors);
  } finally {
    await page.close();
    for (const c of clients) await c.close().catch(() => undefined);
    await s.stop();
  }
}

async function searchPrefix(page: Page, s: ConsoleServer, prefix: string): Promise<void> {
  await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
  await page.getByLabel('Search by').selectOption('name_prefix');
  await page.getByRole('searchbox', { name: 'Search accounts' }).fill(prefix);
  await page.getByRole('searchbox').press('Enter');
}

/** Waits until account `name` is shown with its bag loaded (a table or "is empty"). */
async function accountShown(page: Page, name: string): Promise<void> {
  await page.getByRole('heading', { name: `Account ${iso(name)}` }).waitFor();
  await page.getByRole('table', { name: `${iso('bag')} ${iso(name)}` }).or(page.getByText(`The ${iso('bag')} ${iso(name)} is empty.`)).waitFor();
}

test.serial('a bag of an account opened before another, failing late, is not shown as an error over the newer account', async (t) => {
  // console-page.md, Accounts: "an account opened … while another was still loading replaces
  // it … and the older answer is dropped, a failure included: its error is not shown over the
  // newer view". ada's bag answers last, with a 503; the operator is looking at adam by then.
  await withPlayers(['ada', 'adam'], async (s, page) => {
    await searchPrefix(page, s, 'ada');
    await page.getByRole('button', { name: 'Open account adam', exact: true }).waitFor();
    const slow = holdOne();
    await page.route((url) => url.pathname === `${V1}/characer/bag/ada/`, (r) => slow.hold(r));
    await page.getByRole('button', { name: 'Open account ada', exact: true }).click();
    const held = await slow.held;
    await page.getByRole('button', { name: 'Open account adam', exact: true }).click();
    await accountShown(page, 'adam');
    const answered = page.waitForEvent('requestfinished', (r) => new URL(r.url()).pathname === `${V1}/characer/bag/ada/`);
    await held.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: 'GSF_ERR_UNAVAILABLE', message: 'late failure of ada\'s bag' }) });
    await answered;
    // A round trip from the page lets it handle the late answer first.
    await page.evaluate('fetch("/console/").then((r) => r.text())');
    t.is(await page.locator('#account-title').textContent(), `Account ${iso('adam')}`);
    t.false(await page.getByRole('alert').isVisible(), `alert shown over adam: ${await page.locator('#error').textContent()}`);
  });
});

test.serial('a ban of one account answered after the operator opened another does not bring the banned account back over it', async (t) => {
  // console-page.md, Accounts: "Only what was asked for last is shown: an account opened … while
  // another was still loading replaces it". The operator bans ada (slow answer) and opens adam
  // meanwhile: adam, asked for last, stays shown (a view of ada the operator did not ask for
  // again, with ada's Ban/Reinstate buttons, must not replace adam's).
  await withPlayers(['ada', 'adam'], async (s, page) => {
    await searchPrefix(page, s, 'ada');
    await page.getByRole('button', { name: 'Open account ada', exact: true }).click();
    await accountShown(page, 'ada');
    const slow = holdOne();
    await page.route((url) => url.pathname === `${V1}/account/ada/ban/`, (r) => (r.request().method() === 'POST' ? slow.hold(r) : r.continue()));
    await page.getByRole('button', { name: 'Ban', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    const held = await slow.held;
    await page.getByRole('button', { name: 'Open account adam', exact: true }).click();
    await accountShown(page, 'adam');
    await held.continue();
    await page.getByRole('status').getByText(`Banned ${iso('ada')}.`).waitFor();
    t.is((await s.call('GET', `${V1}/account/ada/ban/`)).body, true);
    // Whatever the page does after the ban (it reloads a view), let it finish.
    await page.waitForLoadState('networkidle');
    t.is(await page.locator('#account-title').textContent(), `Account ${iso('adam')}`);
  });
});

test.serial('after a refused save the status line no longer claims the previous save succeeded', async (t) => {
  // console-page.md, Keyboard and screen readers: `status` (successes), `alert` (the API's
  // error). A refused save shows the API's error; the status line beside it must not still say
  // "Saved score of account ada." from the save before, as if this one had been made (a screen
  // reader reads both). The page empties the status line when a search fails; so here.
  await withPlayers(['ada'], async (s, page) => {
    await searchPrefix(page, s, 'ada');
    await page.getByRole('button', { name: 'Open account ada', exact: true }).click();
    await accountShown(page, 'ada');
    const score = page.getByRole('textbox', { name: 'Account score' });
    await score.fill('5');
    const before = await score.elementHandle();
    await page.getByRole('button', { name: 'Save score' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('status').getByText(`Saved ${iso('score')} of account ${iso('ada')}.`).waitFor();
    // The account is shown again after the save: the next value goes into the new view's field.
    await page.waitForFunction((el) => !el!.isConnected, before);
    await accountShown(page, 'ada');
    await score.fill('-1');
    await page.getByRole('button', { name: 'Save score' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('alert').waitFor();
    t.is(await page.getByRole('alert').textContent(), "score must be an integer >= 0 (got '-1') (GSF_ERR_BAD_REQUEST, HTTP 400)");
    t.is(((await s.call('GET', `${V1}/account/ada/`)).body as { score: number }).score, 5);
    t.is(await page.getByRole('status').textContent(), '');
  });
});
