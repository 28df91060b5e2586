/*
 * gsf dashboard: polls the counters REST group once a second into uPlot time-series charts,
 * and shows the event-profiling table in the chosen ordering. Plain browser JavaScript, served
 * as is. `window.gsfDashboard` exposes the current figures (used by the browser test).
 */
/* global window, document, location, localStorage, URLSearchParams, uPlot */
// Needs dashboard-view.js (formatting and the profiling table), loaded before it.
(function () {
  'use strict';

  const POLL_MS = 1000;
  const WINDOW_POINTS = 300; // five minutes at one point a second
  const PROFILING = '/v1/counters/engine/event/profiling/';
  const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2'];
  const DEFAULT_CHARTS = [
    { title: 'Event queue (events/s)', category: 'event/performance/queue', counters: ['inflow_per_sec', 'throughput_per_sec'] },
    { title: 'Event queue: waiting', category: 'event/performance/queue', counters: ['waiting'] },
    { title: 'process: cpu', category: 'process', counters: ['cpu'] },
    { title: 'process: maxrss', category: 'process', counters: ['maxrss'] },
  ];
  const STORAGE_KEY = 'gsf-dashboard-charts';

  // With an API token the page is opened as /dashboard/?token=…; every fetch sends it as a header.
  const token = new URLSearchParams(location.search).get('token');
  const headers = token ? { Authorization: 'Bearer ' + token } : {};

  const state = {
    ticks: 0,
    lastUpdate: 0,
    error: null,
    charts: [],
    profiling: { order: 'order_by_execution_time_sum', events: [], message: null, summary: null },
  };

  const $ = (id) => document.getElementById(id);
  const { fmtNum, fmtClock, renderProfiling } = window.gsfDashboardView;

  /** GET a JSON route; resolves to {status, body} and never throws for HTTP errors. */
  async function getJson(path) {
    const res = await fetch(path, { headers, cache: 'no-store' });
    const text = await res.text();
    let body = null;
    if (text) {
      try { body = JSON.parse(text); } catch { body = text; }
    }
    return { status: res.status, body };
  }

  // A category is one path segment, its '/' written %2F: its name may hold '//', a trailing '/'
  // or '.' segments, which the URL would otherwise lose (?values=true asks for the category).
  const categoryUrl = (category) => '/v1/counters/' + encodeURIComponent(category) + '/?values=true';

  function describeFailure(r) {
    const msg = r.body && typeof r.body === 'object' && r.body.message ? r.body.message : 'HTTP ' + r.status;
    if (r.status === 401) return msg + ' (open the dashboard as /dashboard/?token=<token>)';
    return msg;
  }

  // ---- charts -------------------------------------------------------------------------

  function chartWidth(el) {
    return Math.max(260, Math.floor(el.clientWidth) - 2);
  }

  function addChart(def, removable) {
    const key = def.category + '\u0000' + def.counters.join('\u0000');
    if (state.charts.some((c) => c.key === key)) return null;
    const el = document.createElement('div');
    el.className = 'chart';
    el.dataset.category = def.category;
    el.dataset.counters = def.counters.join(',');
    el.dataset.points = '0';

    const head = document.createElement('div');
    head.className = 'chart-head';
    const title = document.createElement('h3');
    title.textContent = def.title;
    const note = document.createElement('span');
    note.className = 'chart-note';
    head.append(title, note);
    if (removable) {
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'remove';
      remove.title = 'Remove this chart';
      remove.textContent = '×';
      remove.addEventListener('click', () => removeChart(chart));
      head.append(remove);
    }
    const plotEl = document.createElement('div');
    plotEl.className = 'plot';
    el.append(head, plotEl);
    $('charts').append(el);

    const chart = {
      key, def, el, note, removable,
      hovered: false,
      x: [],
      ys: def.counters.map(() => []),
      plot: null,
    };
    chart.plot = new uPlot({
      width: chartWidth(el),
      height: 170,
      scales: { x: { time: true, range: timeRange } },
      cursor: { drag: { x: false, y: false } },
      series: [
        { value: (_u, v) => fmtClock(v) },
        ...def.counters.map((name, i) => ({
          label: name,
          stroke: COLORS[i % COLORS.length],
          fill: def.counters.length === 1 ? COLORS[i % COLORS.length] + '1a' : undefined,
          width: 1.5,
          // dashed after the first, so that equal figures (inflow = throughput) stay visible
          dash: i > 0 ? [6, 4] : undefined,
          spanGaps: false,
          value: (_u, v) => fmtNum(v),
        })),
      ],
      axes: [
        {
          stroke: '#6b7280', grid: { stroke: '#eef0f3' }, ticks: { stroke: '#e5e7eb' }, space: 70,
          incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600],
          values: (_u, splits) => splits.map(fmtClock),
        },
        { stroke: '#6b7280', grid: { stroke: '#eef0f3' }, ticks: { stroke: '#e5e7eb' }, size: 56, values: (_u, vals) => vals.map(fmtNum) },
      ],
    }, [[], ...def.counters.map(() => [])], plotEl);
    // The legend shows the latest point unless the pointer is over the chart.
    plotEl.addEventListener('mouseenter', () => { chart.hovered = true; });
    plotEl.addEventListener('mouseleave', () => {
      chart.hovered = false;
      showLatest(chart);
    });
    state.charts.push(chart);
    return chart;
  }

  /**
   * The x range from the data itself, at least 10 s wide: uPlot would widen a single point to
   * a day and a few points to sub-second ticks.
   */
  function timeRange(u) {
    const x = u.data[0];
    if (!x || x.length === 0) return [0, 10];
    const max = x[x.length - 1];
    return [Math.min(x[0], max - 10), max];
  }

  function showLatest(chart) {
    if (!chart.hovered && chart.x.length > 0) chart.plot.setLegend({ idx: chart.x.length - 1 });
  }

  function removeChart(chart) {
    chart.plot.destroy();
    chart.el.remove();
    state.charts = state.charts.filter((c) => c !== chart);
    saveAdded();
  }

  function saveAdded() {
    const added = state.charts.filter((c) => c.removable).map((c) => ({ category: c.def.category, counter: c.def.counters[0] }));
    try { localStorage.setItem(STORAGE_KEY, JSON.stringify(added)); } catch { /* storage unavailable */ }
  }

  function loadAdded() {
    try {
      const added = JSON.parse(localStorage.getItem(STORAGE_KEY) || '[]');
      return Array.isArray(added) ? added.filter((a) => a && typeof a.category === 'string' && typeof a.counter === 'string') : [];
    } catch {
      return [];
    }
  }

  function addCounterChart(category, counter) {
    const chart = addChart({ title: category + ': ' + counter, category, counters: [counter] }, true);
    if (chart) saveAdded();
    return chart;
  }

  /** Appends one point to every chart from one read of each category. */
  async function pollCounters() {
    const categories = [...new Set(state.charts.map((c) => c.def.category))];
    const reads = await Promise.all(categories.map((cat) => getJson(categoryUrl(cat)).catch(() => null)));
    const byCategory = new Map(categories.map((cat, i) => [cat, reads[i]]));
    const now = Date.now() / 1000;
    let failure = null;
    for (const chart of state.charts) {
      const r = byCategory.get(chart.def.category);
      const ok = r && r.status === 200 && r.body && typeof r.body.values === 'object' && r.body.values !== null;
      // A category missing (404) is the chart's own note; a refused token or a failing server
      // (401, 5xx: e.g. 503 while it stops) is the whole page's status too.
      if (r && !ok && r.status === 401) failure = describeFailure(r);
      else if (r && !ok && r.status >= 500 && failure === null) failure = describeFailure(r);
      const values = ok ? r.body.values : {};
      chart.x.push(now);
      chart.def.counters.forEach((name, i) => {
        const v = values[name];
        chart.ys[i].push(typeof v === 'number' && Number.isFinite(v) ? v : null);
      });
      if (chart.x.length > WINDOW_POINTS) {
        chart.x.shift();
        for (const y of chart.ys) y.shift();
      }
      chart.note.textContent = !r ? 'unreachable' : ok ? '' : r.status === 404 ? 'no such category' : describeFailure(r);
      chart.el.dataset.points = String(chart.x.length);
      chart.el.dataset.last = JSON.stringify(Object.fromEntries(chart.def.counters.map((n, i) => [n, chart.ys[i][chart.ys[i].length - 1]])));
      chart.plot.setData([chart.x, ...chart.ys]);
      showLatest(chart);
    }
    if (reads.some((r) => r === null)) failure = failure || 'gsf server unreachable';
    return failure;
  }

  // ---- counter chooser ----------------------------------------------------------------

  function fillSelect(select, names) {
    const current = select.value;
    select.replaceChildren(...names.map((n) => {
      const o = document.createElement('option');
      o.value = n;
      o.textContent = n;
      return o;
    }));
    if (names.includes(current)) select.value = current;
  }

  async function loadCategories() {
    const r = await getJson('/v1/counters/');
    if (r.status !== 200 || !r.body || !Array.isArray(r.body.categories)) return;
    fillSelect($('chooser-category'), [...r.body.categories].sort());
    await loadCounters();
  }

  async function loadCounters() {
    const category = $('chooser-category').value;
    if (!category) return;
    const r = await getJson(categoryUrl(category));
    if (category !== $('chooser-category').value) return; // another category was chosen meanwhile
    const values = r.status === 200 && r.body && r.body.values ? r.body.values : {};
    // Only numeric counters can be charted (e.g. `os/type` is a string).
    const names = Object.keys(values).filter((n) => typeof values[n] === 'number').sort();
    fillSelect($('chooser-counter'), names);
    $('chooser-counter').dataset.category = category;
    $('chooser-add').disabled = names.length === 0;
  }

  // ---- profiling table (rendered by dashboard-view.js) ------------------------------

  async function pollProfiling() {
    const order = state.profiling.order;
    const [list, summary] = await Promise.all([getJson(PROFILING + order), getJson(PROFILING + 'summary/')]);
    if (order !== state.profiling.order) return; // the ordering changed meanwhile: that fetch wins
    const p = state.profiling;
    if (list.status === 200 && Array.isArray(list.body)) {
      p.events = list.body;
      p.message = null;
    } else {
      // e.g. 409 GSF_ERR_PROFILER_DISABLED while enable_event_profiler is false
      p.events = [];
      p.message = describeFailure(list);
    }
    p.summary = summary.status === 200 ? summary.body : null;
    renderProfiling(state.profiling);
  }

  // ---- server line and status ---------------------------------------------------------

  async function pollServer() {
    const r = await getJson('/v1/status');
    if (r.status !== 200 || !r.body) return;
    const b = r.body;
    const plugins = (b.plugins || []).map((p) => p.name + '@' + p.version).join(', ') || 'none';
    $('server-info').textContent = location.host + ' · ' + b.event_threads_size + ' event threads · plugins: ' + plugins
      + ' · up ' + b.uptime_in_sec + ' s';
  }

  function showStatus() {
    const el = $('status');
    el.classList.toggle('error', state.error !== null);
    el.textContent = state.error !== null ? state.error
      : 'live · updated ' + new Date(state.lastUpdate).toLocaleTimeString();
  }

  async function tick() {
    const started = Date.now();
    try {
      const jobs = [pollCounters(), pollProfiling()];
      if (state.ticks % 5 === 0) jobs.push(pollServer());
      const [failure] = await Promise.all(jobs);
      state.error = failure;
      state.lastUpdate = Date.now();
    } catch (err) {
      state.error = 'gsf server unreachable: ' + (err && err.message ? err.message : String(err));
    }
    state.ticks++;
    document.body.dataset.ticks = String(state.ticks);
    showStatus();
    window.setTimeout(tick, Math.max(0, POLL_MS - (Date.now() - started)));
  }

  // ---- wiring -------------------------------------------------------------------------

  function start() {
    for (const def of DEFAULT_CHARTS) addChart(def, false);
    for (const a of loadAdded()) addChart({ title: a.category + ': ' + a.counter, category: a.category, counters: [a.counter] }, true);

    $('chooser-category').addEventListener('change', () => { loadCounters().catch(() => {}); });
    $('chooser').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const category = $('chooser-category').value;
      const counter = $('chooser-counter').value;
      if (category && counter) addCounterChart(category, counter);
    });
    for (const b of document.querySelectorAll('#orderings button')) {
      b.addEventListener('click', () => {
        state.profiling.order = b.dataset.order;
        state.profiling.events = [];
        renderProfiling(state.profiling);
        pollProfiling().catch(() => {});
      });
    }
    window.addEventListener('resize', () => {
      for (const c of state.charts) c.plot.setSize({ width: chartWidth(c.el), height: 170 });
    });

    renderProfiling(state.profiling);
    loadCategories().catch(() => {});
    tick();
  }

  /** Read-only view of the figures for scripts and tests. */
  window.gsfDashboard = {
    get ticks() { return state.ticks; },
    get error() { return state.error; },
    get order() { return state.profiling.order; },
    get profilingMessage() { return state.profiling.message; },
    get profiledEvents() { return state.profiling.events.map((e) => e.event_name); },
    charts() { return state.charts.map((c) => ({ title: c.def.title, category: c.def.category, counters: c.def.counters.slice(), points: c.x.length })); },
    /** The points recorded for one counter (null where it had no numeric value). */
    series(category, counter) {
      for (const c of state.charts) {
        const i = c.def.category === category ? c.def.counters.indexOf(counter) : -1;
        if (i >= 0) return c.ys[i].slice();
      }
      return null;
    },
    addCounterChart(category, counter) { return addCounterChart(category, counter) !== null; },
  };

  start();
})();
