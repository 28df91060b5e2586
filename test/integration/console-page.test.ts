/**
 * The operator console page (`/console/`) in a real headless Chromium (see _chromium.ts), driven
 * through its roles and names as an operator (or a screen reader) finds them, against the example
 * arena with each console half: the managed one behind an API token (the page signs in), the
 * native one with none (the page needs no signing in). Each half: search a player, see their
 * score, ban them (their next hello is refused), gift an item (their bag grows), send a notice a
 * connected client receives, see an API error as the API words it, read the audit trail, and
 * reinstate from the keyboard alone. Also over plain HTTP: the page is served without the token,
 * and the audit route's paging, order, operator and errors.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import type { GsfClient } from '../../src/sdk/index.ts';
import { chromiumForFile } from './_chromium.ts';
import { failure, startConsoleServer } from './_console.ts';

/** Data in the page's sentences is wrapped in Unicode isolates (console-ui.js `words`). */
const iso = (text: string): string => `\u2068${text}\u2069`;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const outputDir = path.join(root, 'test-output');
const V1 = '/cs-api/v1';
const TOKEN = 'console-page-token-0123';

// A refused call's 4xx is expected, not a page error.
const { openTab } = chromiumForFile(test, { viewport: { width: 1280, height: 1000 } }, (text) => text.startsWith('Failed to load resource'));

/** Clicks `name` and confirms the change in the dialog. */
async function confirmed(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name, exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
}

for (const managed of [true, false]) {
  const side = managed ? 'managed' : 'native';
  test.serial(`[${side}] an operator finds a player, bans them, gifts, sends a notice and reads the audit trail`, async (t) => {
    const s = await startConsoleServer(managed, managed ? { ApiService: { api_service_token: TOKEN } } : {});
    const auth: Record<string, string> = managed ? { Authorization: `Bearer ${TOKEN}` } : {};
    const clients: GsfClient[] = [];
    const { page, errors } = await openTab();
    try {
      const ada = await s.player('ada');
      const grace = await s.player('grace');
      clients.push(ada, grace);
      for (let i = 0; i < 30; i++) await ada.request('click'); // a potion every 25 clicks

      await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
      t.is(await page.title(), 'gsf console');
      if (managed) {
        // Signing in: a wrong token is refused in the API's words, the right one opens the page.
        await page.getByLabel('API token').fill('wrong');
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('alert').getByText('missing or invalid bearer token', { exact: true }).waitFor();
        await page.getByLabel('API token').fill(TOKEN);
        await page.getByRole('button', { name: 'Sign in' }).click();
      }
      await page.getByRole('searchbox', { name: 'Search accounts' }).waitFor();
      t.is(await page.getByRole('button', { name: 'Sign in' }).isVisible(), false);
      await page.getByLabel('Operator').fill('anna');

      // Search by name, open the account, see the score.
      await page.getByLabel('Search by').selectOption('name');
      await page.getByRole('searchbox').fill('ada');
      await page.getByRole('searchbox').press('Enter');
      await page.getByRole('button', { name: 'Open account ada' }).click();
      await page.getByRole('heading', { name: `Account ${iso('ada')}` }).waitFor();
      t.is(await page.getByLabel('Account score').inputValue(), '30');
      await page.getByText('Logged in: yes').waitFor();
      await page.getByText('Banned: no').waitFor();
      // The characters and their bags render after the account's own fields: wait for the row.
      const bagTable = page.getByRole('table', { name: `${iso('bag')} ${iso('ada')}` });
      await bagTable.getByRole('cell', { name: 'potion', exact: true }).waitFor();
      t.deepEqual(await bagTable.locator('tbody td').allTextContents(), ['potion', 'Potion', '1', 'Delete']);
      if (managed) {
        fs.mkdirSync(outputDir, { recursive: true });
        await page.screenshot({ path: path.join(outputDir, 'console-account.png'), fullPage: true });
      }

      // Ban: confirmed, the session closes, the next hello is refused.
      const closed = ada.closed;
      await confirmed(page, 'Ban');
      t.deepEqual(await closed, { code: 4010, reason: 'banned by an operator' });
      await page.getByText('Banned: yes').waitFor();
      const again = await s.connect();
      clients.push(again);
      t.deepEqual(await again.request('hello', { name: 'ada' }), { error: "account 'ada' is banned" });

      // A gift of 2 gems to ada: the bag grows.
      await page.getByRole('link', { name: 'Live operations' }).click();
      await page.getByLabel('Ids, one per line').fill('ada');
      await page.getByLabel('Title', { exact: true }).fill('Sorry');
      await page.getByLabel('Content').fill('For the downtime');
      await page.getByLabel('Quantity of Gem').fill('2');
      await confirmed(page, 'Send gift');
      await page.getByRole('status').getByText(`Gift sent to ${iso('account')}(s) ${iso('ada')}.`).waitFor();
      const bag = await s.call('GET', `${V1}/characer/bag/ada/`, undefined, auth);
      t.deepEqual(bag.body, [{ item_id: 'gem', name: 'Gem', quantity: 2 }, { item_id: 'potion', name: 'Potion', quantity: 1 }]);

      // A notice reaches the connected client.
      const notice = grace.next('notice');
      await page.getByRole('textbox', { name: 'Message', exact: true }).fill('Restart at 03:00 UTC');
      await confirmed(page, 'Send notice');
      t.deepEqual((await notice).body, { category: 'all', color: '#FF8800', messages: [{ language_code: 'en', message: 'Restart at 03:00 UTC' }] });

      // A refused change shows the API's message as the API words it.
      await page.getByLabel('Receipt id').fill('r-1');
      await page.getByLabel('Purchase log (JSON)').fill('{"account_id": "ada", "items": [{"item_id": "crown", "quantity": 1}]}');
      await confirmed(page, 'Refund');
      await page.getByRole('alert').getByText("purchase log 'items[0].item_id' must be an arena item (gem, medal, potion, sword)", { exact: true }).waitFor();

      // The audit trail, newest first, names the operator.
      await page.getByRole('link', { name: 'Audit trail' }).click();
      const rows = page.getByRole('table', { name: 'Changes, newest first' }).locator('tbody tr');
      await rows.first().waitFor();
      const cells = async (i: number): Promise<string[]> => rows.nth(i).locator('td').allTextContents();
      t.deepEqual((await cells(0)).slice(1, 5), ['anna', 'POST', `${V1}/refund/r-1/`, '400']);
      t.deepEqual((await cells(1)).slice(1, 5), ['anna', 'POST', `${V1}/notice/`, '204']);
      t.deepEqual((await cells(2)).slice(1, 5), ['anna', 'POST', `${V1}/item/gift/`, '204']);
      t.deepEqual((await cells(3)).slice(1, 5), ['anna', 'POST', `${V1}/account/ada/ban/`, '204']);
      t.true(s.logs().some((l) => l.includes(`cs-api audit: method=POST, path=${V1}/account/ada/ban/, status=204, duration_in_ms=`) && l.endsWith(', operator="anna"')));

      // Reinstating from the keyboard alone: focus the button, Enter, then Tab to Confirm and Enter.
      await page.getByRole('link', { name: 'Accounts' }).click();
      await page.getByRole('button', { name: 'Reinstate' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('dialog').waitFor();
      t.is(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent), 'Cancel');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.getByText('Banned: no').waitFor();
      t.deepEqual(await again.request('hello', { name: 'ada' }), { name: 'ada', room: 'lobby' });
      t.deepEqual(errors, []);
    } finally {
      await page.close();
      for (const c of clients) await c.close().catch(() => undefined);
      await s.stop();
    }
  });
}

test.serial('the page is served without the token; the audit route pages newest first and refuses bad input', async (t) => {
  const s = await startConsoleServer(true, { ApiService: { api_service_token: TOKEN } });
  try {
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const base = `http://127.0.0.1:${s.server.api.port}`;
    const page = await fetch(`${base}/console/`);
    t.is(page.status, 200);
    t.is(page.headers.get('content-type'), 'text/html; charset=utf-8');
    t.regex(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    t.regex(await page.text(), /<script type="module" src="\/console\/assets\/console\.js"><\/script>/);
    for (const name of ['console.js', 'console-api.js', 'console-ui.js', 'console-accounts.js', 'console-characters.js', 'console-live.js', 'console-audit.js', 'console.css']) {
      const r = await fetch(`${base}/console/assets/${name}`);
      t.is(r.status, 200, name);
      t.is(r.headers.get('content-type'), name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8');
      t.is(await r.text(), fs.readFileSync(path.join(root, 'src', 'api', 'main', 'console-page', name), 'utf8'));
    }
    t.deepEqual((await s.call('GET', '/console/assets/nope.js')).body, failure('GSF_ERR_NOT_FOUND', 'no route for GET /console/assets/nope.js'));
    // Only the page is public: the API, other methods and look-alike paths still need the token.
    for (const [method, url] of [['GET', `${V1}/audit/`], ['GET', `${V1}/account/ada/`], ['POST', '/console/'], ['GET', '/consoles/']]) {
      const r = await s.call(method!, url!);
      t.is(r.status, 401, `${method} ${url}`);
      t.deepEqual(r.body, failure('GSF_ERR_UNAUTHORIZED', 'missing or invalid bearer token'));
    }

    const audit = async (query = ''): Promise<{ status: number; body: unknown }> => {
      const r = await s.call('GET', `${V1}/audit/${query}`, undefined, auth);
      return { status: r.status, body: r.body };
    };
    t.deepEqual(await audit(), { status: 200, body: { total: 0, entries: [] } } as never);
    await s.player('ada');
    // Reads are not changes; changes are, refused ones included, with the operator they name.
    await s.call('GET', `${V1}/account/ada/`, undefined, auth);
    t.is((await s.call('PUT', `${V1}/account/ada/score/5/`, undefined, { ...auth, 'X-Gsf-Operator': encodeURIComponent('Zoë O') })).status, 204);
    t.is((await s.call('PUT', `${V1}/account/ada/banned/true/`, undefined, auth)).status, 400);
    t.is((await s.call('POST', `${V1}/account/nobody/ban/`, undefined, { ...auth, 'X-Gsf-Operator': 'ops' })).status, 404);
    const all = (await audit()).body as { total: number; entries: Array<Record<string, unknown>> };
    t.is(all.total, 3);
    t.deepEqual(all.entries.map((e) => [e.operator, e.method, e.path, e.status]), [
      ['ops', 'POST', `${V1}/account/nobody/ban/`, 404],
      ['', 'PUT', `${V1}/account/ada/banned/true/`, 400],
      ['Zoë O', 'PUT', `${V1}/account/ada/score/5/`, 204],
    ]);
    for (const e of all.entries) {
      t.regex(e.time as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      t.true(typeof e.duration_in_ms === 'number' && e.duration_in_ms >= 0);
    }
    t.deepEqual(((await audit('?page_size=2&page_no=1')).body as { entries: unknown[] }).entries, all.entries.slice(2));
    t.deepEqual(((await audit('?page_size=2&page_no=5')).body as { entries: unknown[] }).entries, []);
    t.deepEqual(await audit('?page_size=0'), { status: 400, body: failure('GSF_ERR_BAD_REQUEST', "page_size must be an integer from 1 to 100 (got '0')") } as never);
    t.deepEqual(await audit('?page_no=x'), { status: 400, body: failure('GSF_ERR_BAD_REQUEST', "page_no must be an integer >= 0 (got 'x')") } as never);
    // Refused by the API service itself (the route takes GET only): a change, so in the trail too.
    t.is((await s.call('POST', `${V1}/audit/`, undefined, auth)).status, 405);

    // A bad operator name is refused before any handler runs, and the refusal is in the trail.
    const long = 'x'.repeat(65);
    for (const [name, message] of [
      ['%E0%A4%A', "header 'X-Gsf-Operator' must be percent-encoded UTF-8"],
      ['a%0Ab', "header 'X-Gsf-Operator' must not hold control characters"],
      [long, "header 'X-Gsf-Operator' must be at most 64 characters"],
    ]) {
      const r = await s.call('POST', `${V1}/account/ada/ban/`, undefined, { ...auth, 'X-Gsf-Operator': name! });
      t.deepEqual([r.status, r.body], [400, failure('GSF_ERR_BAD_REQUEST', message!)], name);
    }
    t.deepEqual((await s.call('GET', `${V1}/account/ada/ban/`, undefined, auth)).body, false);
    const latest = ((await audit('?page_size=1')).body as { total: number; entries: Array<Record<string, unknown>> });
    t.is(latest.total, 7);
    t.like(latest.entries[0], { operator: '', method: 'POST', path: `${V1}/account/ada/ban/`, status: 400 });
    t.true(s.logs().some((l) => l.includes(`method=PUT, path=${V1}/account/ada/score/5/, status=204`) && l.endsWith(', operator="Zoë O"')));
  } finally {
    await s.stop();
  }
});
