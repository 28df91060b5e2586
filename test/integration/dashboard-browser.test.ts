/**
 * The dashboard in a real headless Chromium (the `@sparticuz/chromium` devDependency, or a system
 * Chromium; see _chromium.ts), driven by playwright-core:
 * the page and its assets come from gsf, charts fill from the counters REST group, the
 * profiling table follows the chosen ordering, and the API token is passed along; the status
 * line shows a stopping server's 503s, and the page goes on charting when the server comes back.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { native } from '../../src/native.ts';
import { startTestServer, waitFor, type TestServer } from './_server.ts';
import { holdPort } from './_ports.ts';
import { chromiumForFile } from './_chromium.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const outputDir = path.join(root, 'test-output');
const QUEUE = 'event/performance/queue';
const PROFILING = '/v1/counters/engine/event/profiling/';

/** What the page exposes as `window.gsfDashboard`. */
interface DashboardView {
  ticks: number;
  error: string | null;
  order: string;
  profilingMessage: string | null;
  profiledEvents: string[];
  charts(): Array<{ title: string; category: string; counters: string[]; points: number }>;
  series(category: string, counter: string): Array<number | null> | null;
}
declare const gsfDashboard: DashboardView;

const { openTab } = chromiumForFile(test, { viewport: { width: 1280, height: 900 } });

/** Queues `count` probe events from outside any event, spread over `seconds`. */
async function generateEvents(s: TestServer, count: number, seconds: number): Promise<void> {
  const rounds = seconds * 10;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < count / rounds; i++) s.server.invoke('probe.note', { file: '', label: '' });
    await new Promise((res) => setTimeout(res, 100));
  }
}

test.serial('gsf serves the page and its assets itself; an unknown asset is a JSON 404', async (t) => {
  const s = await startTestServer();
  try {
    const base = `http://127.0.0.1:${s.server.api.port}`;
    const page = await fetch(`${base}/dashboard/`);
    t.is(page.status, 200);
    t.is(page.headers.get('content-type'), 'text/html; charset=utf-8');
    t.is(page.headers.get('cache-control'), 'no-store');
    const html = await page.text();
    t.regex(html, /<title>gsf dashboard<\/title>/);
    t.regex(html, /src="\/dashboard\/assets\/uplot\.js"/);
    t.notRegex(html, /\{\{query\}\}/);

    const require = createRequire(import.meta.url);
    const uplot = await fetch(`${base}/dashboard/assets/uplot.js`);
    t.is(uplot.status, 200);
    t.is(uplot.headers.get('content-type'), 'text/javascript; charset=utf-8');
    t.deepEqual(Buffer.from(await uplot.arrayBuffer()), fs.readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js')));
    const css = await fetch(`${base}/dashboard/assets/uplot.css`);
    t.is(css.status, 200);
    t.is(css.headers.get('content-type'), 'text/css; charset=utf-8');
    t.deepEqual(Buffer.from(await css.arrayBuffer()), fs.readFileSync(require.resolve('uplot/dist/uPlot.min.css')));
    for (const name of ['dashboard.js', 'dashboard-view.js', 'dashboard.css']) {
      const r = await fetch(`${base}/dashboard/assets/${name}`);
      t.is(r.status, 200, name);
      t.is(await r.text(), fs.readFileSync(path.join(root, 'src', 'api', 'main', 'dashboard', name), 'utf8'));
    }

    const missing = await fetch(`${base}/dashboard/assets/nope.js`);
    t.is(missing.status, 404);
    t.is(missing.headers.get('content-type'), 'application/json');
    t.deepEqual(await missing.json(), { error: 'GSF_ERR_NOT_FOUND', message: 'no route for GET /dashboard/assets/nope.js' });
  } finally {
    await s.stop();
  }
});

test.serial('in Chromium the charts update after events, the table follows the ordering, and a screenshot is written', async (t) => {
  const s = await startTestServer({ EventDispatcher: { event_threads_size: 2 } });
  const { page, errors } = await openTab();
  try {
    const response = await page.goto(`http://127.0.0.1:${s.server.api.port}/dashboard/`);
    t.is(response?.status(), 200);
    t.is(await page.title(), 'gsf dashboard');
    await page.waitForFunction(() => gsfDashboard.ticks >= 2);
    t.true(await page.locator('.chart').count() >= 4);
    t.is(await page.locator('.chart canvas').count(), await page.locator('.chart').count());
    const charted = await page.evaluate(() => gsfDashboard.charts().map((c) => `${c.category} ${c.counters.join(',')}`));
    t.true(charted.includes(`${QUEUE} inflow_per_sec,throughput_per_sec`), charted.join('; '));
    t.true(charted.includes(`${QUEUE} waiting`));
    t.true(charted.includes('process cpu'));
    t.true(charted.includes('process maxrss'));
    t.is(await page.evaluate(() => gsfDashboard.error), null);
    // Chart values: the unit is chosen after rounding, and small values keep their digits.
    const shown = await page.evaluate(() => [999, 999.6, 1500, 999_999, 12_345_678, -2500, 0.5, 0.004, 0, null]
      .map((v) => (globalThis as unknown as { gsfDashboardView: { fmtNum(v: number | null): string } }).gsfDashboardView.fmtNum(v)));
    t.deepEqual(shown, ['999', '1.00k', '1.50k', '1.00M', '12.3M', '-2.50k', '0.50', '4.0e-3', '0', '–']);
    // process figures are plotted from the first point on
    const maxrss = await page.evaluate(() => gsfDashboard.series('process', 'maxrss'));
    t.true(typeof maxrss?.[0] === 'number' && maxrss[0] > 0, JSON.stringify(maxrss));

    await generateEvents(s, 4000, 2);
    const peak = await page.waitForFunction(
      (q) => Math.max(0, ...(gsfDashboard.series(q, 'throughput_per_sec') ?? []).map((v) => v ?? 0)),
      QUEUE, { timeout: 15000 },
    );
    t.true((await peak.jsonValue()) > 0);
    const inflow = await page.evaluate((q) => gsfDashboard.series(q, 'inflow_per_sec') ?? [], QUEUE);
    t.true(inflow.some((v) => (v ?? 0) > 0), JSON.stringify(inflow));

    // A few slow events under another name, so that the orderings differ from each other.
    for (let i = 0; i < 20; i++) s.server.invoke('probe.note', { file: '', label: '', setName: 'dash.slow', spinMs: 150 });
    await waitFor(() => native.queueStats().outstanding === 0 && native.queueStats().waiting === 0, 10000, 'idle queue');

    // Each ordering button asks its own route, shows its rows in that order, and marks itself and its column.
    const base = `http://127.0.0.1:${s.server.api.port}`;
    for (const order of ['order_by_handler_time', 'order_by_handler_time_sum', 'order_by_io_wait_time', 'order_by_execution_time_sum']) {
      await page.click(`#orderings button[data-order="${order}"]`);
      await page.waitForFunction((o) => gsfDashboard.order === o && gsfDashboard.profiledEvents.includes('dash.slow'), order);
      const expected = (await (await fetch(`${base}${PROFILING}${order}`)).json() as Array<{ event_name: string }>).map((e) => e.event_name);
      await page.waitForFunction((names) => gsfDashboard.profiledEvents.join() === names.join(), expected);
      t.deepEqual(await page.locator('#profiling-table tbody tr').evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { event: string } }).dataset.event)), expected);
      // handler time: 20 × 150 ms spinning against 4,000 trivial handlers (even at 500 µs each on a
      // loaded machine, those add up to 2 s)
      if (order.startsWith('order_by_handler_time')) t.is(expected[0], 'dash.slow', order);
      t.is(await page.getAttribute('#profiling-table', 'data-order'), order);
      t.is(await page.getAttribute(`#orderings button[data-order="${order}"]`, 'aria-pressed'), 'true');
      t.is(await page.locator('#orderings button[aria-pressed="true"]').count(), 1);
      t.is(await page.getAttribute(`#profiling-table th[data-col="${order}"]`, 'class'), 'active');
    }
    const row = page.locator('#profiling-table tbody tr[data-event="probe.note"]');
    t.is(await row.locator('td.name').textContent(), 'probe.note');
    const count = Number((await row.locator('td').nth(1).textContent())?.replaceAll(',', ''));
    t.true(count >= 4000, `count cell: ${count}`);
    t.regex(await page.locator('#profiling-summary').innerText(), /^all time: [\d,]+ events, execution mean [\d.]+ (µs|ms|s) · last minute: [\d,]+ events/);

    // The chooser offers numeric counters only and adds a chart for the chosen one.
    await page.waitForSelector('#chooser-category option', { state: 'attached' });
    const categories = await page.locator('#chooser-category option').allTextContents();
    t.true(categories.includes('process') && categories.includes(QUEUE), categories.join(', '));
    await page.selectOption('#chooser-category', 'os');
    await page.waitForSelector('#chooser-counter[data-category="os"] option', { state: 'attached' });
    const osCounters = await page.locator('#chooser-counter option').allTextContents();
    const os = await (await fetch(`http://127.0.0.1:${s.server.api.port}/v1/counters/os/?values=true`)).json() as { values: Record<string, unknown> };
    t.is(typeof os.values.type, 'string');
    t.deepEqual(osCounters, Object.keys(os.values).filter((k) => typeof os.values[k] === 'number').sort());
    const before = await page.locator('.chart').count();
    const chosen = osCounters[0]!;
    await page.selectOption('#chooser-counter', chosen);
    await page.click('#chooser-add');
    t.is(await page.locator('.chart').count(), before + 1);
    await page.waitForFunction((c) => (gsfDashboard.series('os', c) ?? []).some((v) => typeof v === 'number'), chosen);

    fs.mkdirSync(outputDir, { recursive: true });
    const shot = path.join(outputDir, 'dashboard.png');
    await page.screenshot({ path: shot, fullPage: true });
    t.true(fs.statSync(shot).size > 10_000);
    t.deepEqual(errors, []);
  } finally {
    await page.close();
    await s.stop();
  }
});

test.serial('with an API token the page loads only with ?token=, and shows why the profiler table is empty', async (t) => {
  const token = 'dash-token-0123456789';
  const s = await startTestServer({
    ApiService: { api_service_token: token },
    EventDispatcher: { enable_event_profiler: false },
  });
  const { page, errors } = await openTab();
  try {
    const base = `http://127.0.0.1:${s.server.api.port}`;
    for (const p of ['/dashboard/', '/dashboard/assets/dashboard.js', '/v1/counters/']) {
      const r = await fetch(`${base}${p}`);
      t.is(r.status, 401, p);
      t.is((await r.json() as { error: string }).error, 'GSF_ERR_UNAUTHORIZED');
    }
    const denied = await page.goto(`${base}/dashboard/`);
    t.is(denied?.status(), 401);
    const wrong = await page.goto(`${base}/dashboard/?token=nope`);
    t.is(wrong?.status(), 401);
    // the query token opens the dashboard only, not the REST routes
    t.is((await fetch(`${base}/v1/counters/?token=${token}`)).status, 401);

    const ok = await page.goto(`${base}/dashboard/?token=${token}`);
    t.is(ok?.status(), 200);
    t.is(await page.title(), 'gsf dashboard');
    // assets carried the token; the page's fetches send it as a bearer header
    await page.waitForFunction(() => gsfDashboard.ticks >= 2 && gsfDashboard.profilingMessage !== null);
    t.is(await page.evaluate(() => gsfDashboard.error), null);
    const cpu = await page.evaluate(() => gsfDashboard.series('process', 'cpu'));
    t.true(cpu !== null && cpu.some((v) => typeof v === 'number'), JSON.stringify(cpu));
    t.false(await page.isVisible('#profiling-table'));
    t.true(await page.isVisible('#profiling-message'));
    const message = await page.evaluate(() => gsfDashboard.profilingMessage);
    const expected = await fetch(`${base}/v1/counters/engine/event/profiling/order_by_execution_time_sum`, { headers: { Authorization: `Bearer ${token}` } });
    t.is(expected.status, 409);
    t.is(message, (await expected.json() as { message: string }).message);
    t.is(await page.locator('#profiling-message').textContent(), message);
    fs.mkdirSync(outputDir, { recursive: true });
    await page.screenshot({ path: path.join(outputDir, 'dashboard-profiler-off.png'), fullPage: true });
    // Chromium logs every non-2xx fetch: the refused navigations (401) and the profiler routes (409).
    t.deepEqual(errors.filter((e) => !/status of (401|409)\b/.test(e)), []);
  } finally {
    await page.close();
    await s.stop();
  }
});

test.serial('while the server stops (every read answered 503) the status line says so, not "live"', async (t) => {
  const s = await startTestServer();
  const { page } = await openTab();
  let stopping: Promise<void> | null = null;
  try {
    await page.goto(`http://127.0.0.1:${s.server.api.port}/dashboard/`);
    await page.waitForFunction(() => gsfDashboard.ticks >= 2 && gsfDashboard.error === null);
    // An event that holds the stop in its drain; the API answers 503 meanwhile.
    s.server.invoke('probe.note', { file: '', label: '', sleepSyncMs: 4000 });
    await waitFor(() => native.queueStats().outstanding > 0, 5000, 'the event to run');
    stopping = s.stop();
    await page.waitForFunction(() => gsfDashboard.error === 'the server is stopping', undefined, { timeout: 5000 });
    t.is(await page.locator('#status').textContent(), 'the server is stopping');
  } finally {
    await page.close();
    await (stopping ?? s.stop());
  }
});

test.serial('a server that stops and comes back on its port: the page says unreachable, then goes on charting', async (t) => {
  const held = await holdPort();
  const port = held.port;
  held.release();
  const first = await startTestServer({ ApiService: { api_service_port: port } });
  const { page } = await openTab();
  let second: TestServer | null = null;
  try {
    await page.goto(`http://127.0.0.1:${port}/dashboard/`);
    await page.waitForFunction(() => gsfDashboard.ticks >= 2 && gsfDashboard.error === null);
    await first.stop();
    // Held while the server is down (a connection is refused, as by no server): no server of a
    // test file running alongside takes the port, which the kernel may hand to one asking for any.
    const down = await holdPort(port);
    try {
      await page.waitForFunction(() => gsfDashboard.error !== null && /unreachable/.test(gsfDashboard.error), undefined, { timeout: 10000 });
    } finally {
      down.release();
    }
    second = await startTestServer({ ApiService: { api_service_port: port } });
    await page.waitForFunction(() => gsfDashboard.error === null, undefined, { timeout: 10000 });
    const before = await page.evaluate(() => (gsfDashboard.series('process', 'maxrss') ?? []).length);
    await page.waitForFunction((n) => (gsfDashboard.series('process', 'maxrss') ?? []).slice(n).some((v) => typeof v === 'number'), before, { timeout: 10000 });
    const after = await page.evaluate((n) => (gsfDashboard.series('process', 'maxrss') ?? []).slice(n), before);
    t.true(after.some((v) => typeof v === 'number' && v > 0), JSON.stringify(after));
    t.is(await page.evaluate(() => gsfDashboard.error), null);
  } finally {
    await page.close();
    await second?.stop();
  }
});
