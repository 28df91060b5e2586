/**
 * The two browser pages gsf serves (the console page and the dashboard) with data from players
 * and plugins that holds bidi overrides, URL-special characters in category names, and long text.
 */
import test from 'ava';
import { chromiumForFile, readsLeftToRight } from './_chromium.ts';
import { startConsoleServer } from './_console.ts';

/** Data in the console page's sentences is wrapped in Unicode isolates (console-ui.js `words`). */
const iso = (text: string): string => `\u2068${text}\u2069`;

const { openTab } = chromiumForFile(test, { viewport: { width: 1280, height: 1000 } }, (text) => text.startsWith('Failed to load resource'));

test.serial('console: a player name with a bidi override does not reverse the page\'s own words (confirmation, status)', async (t) => {
  const s = await startConsoleServer(false);
  const name = '\u202Eevil';
  // In the page's sentences the name's own override is shown as text (see console-ui.js words).
  const shown = '<U+202E>evil';
  const client = await s.player(name);
  const { page, errors } = await openTab();
  try {
    await page.goto(`http://127.0.0.1:${s.server.api.port}/console/`);
    await page.getByLabel('Search by').selectOption('name');
    await page.getByRole('searchbox', { name: 'Search accounts' }).fill(name);
    await page.getByRole('searchbox').press('Enter');
    await page.getByRole('status').getByText(`Searched accounts where ${iso('name')} is '${iso(shown)}'.`, { exact: true }).waitFor();
    await page.getByRole('button', { name: `Open account ${name}`, exact: true }).click();
    await page.locator('.inventory p').getByText(`The ${iso('bag')} ${iso(shown)} is empty.`, { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Ban', exact: true }).click();
    await page.getByRole('dialog').waitFor();
    t.is(await page.locator('#confirm-text').textContent(), `Ban account ${iso(shown)}? Their session is closed and they cannot log in until reinstated.`);
    // The page's own words around the name must read as written: above all what the operator confirms.
    t.deepEqual({
      status: await readsLeftToRight(page, '#status', "'."),
      bag: await readsLeftToRight(page, '.inventory p', ' is empty.'),
      confirm: await readsLeftToRight(page, '#confirm-text', 'Their session is closed'),
    }, { status: true, bag: true, confirm: true });
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    t.deepEqual(errors, []);
  } finally {
    await page.close();
    await client.close().catch(() => undefined);
    await s.stop();
  }
});

// ---- dashboard -------------------------------------------------------------------------------

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, waitFor } from './_server.ts';

const SRC_INDEX = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'index.ts');

/** A plugin in a temp folder: `pp.counter {category, name, value}` sets a counter. */
function counterPlugin(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-pp-'));
  const plugin = path.join(dir, 'pagesprobe');
  fs.mkdirSync(plugin);
  fs.writeFileSync(path.join(plugin, 'index.ts'), `import { definePlugin } from ${JSON.stringify(SRC_INDEX)};
export default definePlugin({
  name: 'pagesprobe', version: '0.0.1',
  register(api) {
    api.event<{ category: string; name: string; value: number }>('pp.counter', (p) => {
      api.counters.update(p.category, p.name, p.value);
    });
  },
});
`);
  return plugin;
}

interface Dash {
  ticks: number;
  profiledEvents: string[];
  error: string | null;
  addCounterChart(category: string, counter: string): boolean;
  series(category: string, counter: string): Array<number | null> | null;
}
declare const gsfDashboard: Dash;
/** What these tests read of the page's document (the typecheck has no DOM library). */
interface El { dataset: Record<string, string | undefined>; textContent: string | null; querySelector(s: string): El | null }
declare const document: { getElementById(id: string): El | null; documentElement: { scrollWidth: number; clientWidth: number } };

const CATEGORIES = ['pp/trail/', 'pp//double', 'pp/./dot', 'pp/../up'];

test.serial('dashboard: charts of plugin categories with special characters read their values', async (t) => {
  const s = await startTestServer({}, ['probe', counterPlugin()]);
  const { page, errors } = await openTab();
  try {
    for (const [i, category] of CATEGORIES.entries()) s.server.invoke('pp.counter', { category, name: 'n<b>x</b>', value: 100 + i });
    const base = `http://127.0.0.1:${s.server.api.port}`;
    await waitFor(async () => ((await (await fetch(`${base}/v1/counters/`)).json()) as { categories: string[] }).categories.includes('pp/../up'));
    await page.goto(`${base}/dashboard/`);
    await page.waitForFunction(() => gsfDashboard.ticks >= 1);
    for (const category of CATEGORIES) t.true(await page.evaluate(([c]) => gsfDashboard.addCounterChart(c!, 'n<b>x</b>'), [category]), category);
    await page.waitForFunction(() => gsfDashboard.ticks >= 4);
    const got: Record<string, unknown> = {};
    for (const category of CATEGORIES) got[category] = (await page.evaluate(([c]) => gsfDashboard.series(c!, 'n<b>x</b>'), [category]))!.at(-1);
    const notes = await page.locator('.chart').evaluateAll((els) => (els as unknown as El[]).map((e) => [e.dataset.category, e.querySelector('.chart-note')!.textContent]));
    // The chooser reads the category the same way: its counter list stays empty.
    await page.locator('#chooser-category').selectOption('pp/trail/');
    await page.waitForFunction(() => document.getElementById('chooser-counter')!.dataset.category === 'pp/trail/');
    const chooser = await page.locator('#chooser-counter option').allTextContents();
    t.deepEqual({ values: got, notes: notes.slice(4), chooser }, {
      values: Object.fromEntries(CATEGORIES.map((c, i) => [c, 100 + i])),
      notes: CATEGORIES.map((c) => [c, '']),
      chooser: ['n<b>x</b>'],
    });
    t.is(await page.evaluate(() => (globalThis as unknown as { __xss?: number }).__xss), undefined);
    t.deepEqual(errors, []);
  } finally {
    await page.close();
    await s.stop();
  }
});

test.serial('dashboard: a category named like a counter of a shorter one (pp/sub beside pp\'s sub) can be charted', async (t) => {
  const s = await startTestServer({}, ['probe', counterPlugin()]);
  const { page, errors } = await openTab();
  try {
    s.server.invoke('pp.counter', { category: 'pp', name: 'sub', value: 1 });
    s.server.invoke('pp.counter', { category: 'pp/sub', name: 'players', value: 7 });
    const base = `http://127.0.0.1:${s.server.api.port}`;
    await waitFor(async () => ((await (await fetch(`${base}/v1/counters/`)).json()) as { categories: string[] }).categories.includes('pp/sub'));
    await page.goto(`${base}/dashboard/`);
    await page.waitForFunction(() => gsfDashboard.ticks >= 1);
    await page.locator('#chooser-category').selectOption('pp/sub');
    await page.waitForFunction(() => document.getElementById('chooser-counter')!.dataset.category === 'pp/sub');
    const chooser = await page.locator('#chooser-counter option').allTextContents();
    t.true(await page.evaluate(() => gsfDashboard.addCounterChart('pp/sub', 'players')));
    await page.waitForFunction(() => gsfDashboard.ticks >= 3);
    const last = (await page.evaluate(() => gsfDashboard.series('pp/sub', 'players')))!.at(-1);
    const note = await page.locator('.chart[data-category="pp/sub"] .chart-note').textContent();
    t.deepEqual({ chooser, last, note }, { chooser: ['players'], last: 7, note: '' });
    t.deepEqual(errors, []);
  } finally {
    await page.close();
    await s.stop();
  }
});

test.serial('dashboard: a long event name (within the 256-byte limit) keeps the profiling figures on screen', async (t) => {
  const s = await startTestServer();
  const { page, errors } = await openTab();
  try {
    const long = 'player.inventory.'.repeat(15); // 255 bytes, one word
    s.server.invoke('probe.note', { file: '', label: '', setName: long });
    await page.goto(`http://127.0.0.1:${s.server.api.port}/dashboard/`);
    await page.waitForFunction((n) => gsfDashboard.profiledEvents.includes(n), long);
    const width = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth }));
    t.deepEqual(width, { page: 1280, viewport: 1280 });
    t.deepEqual(errors, []);
  } finally {
    await page.close();
    await s.stop();
  }
});
