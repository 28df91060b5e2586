/*
 * gsf dashboard, view helpers: number formatting and the event-profiling table. Plain browser
 * JavaScript, loaded before dashboard.js, which reads them from `window.gsfDashboardView`.
 */
/* global window, document */
(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);

  // ---- number formatting --------------------------------------------------------------

  const UNITS = [[1, ''], [1e3, 'k'], [1e6, 'M'], [1e9, 'G'], [1e12, 'T']];

  /**
   * A chart value in at most about four characters and a unit: 1.50k, 12.3M. The unit is chosen
   * after rounding (999,999 is 1.00M, not 1000k); a value under 0.01 keeps its digits (4.0e-3).
   */
  function fmtNum(v) {
    if (v === null || v === undefined || Number.isNaN(v)) return '–';
    if (v !== 0 && Math.abs(v) < 0.01) return v.toExponential(1);
    let i = 0;
    while (i < UNITS.length - 1 && Math.abs(Number(trim(v / UNITS[i][0]))) >= 1000) i++;
    return trim(v / UNITS[i][0]) + UNITS[i][1];
  }

  function trim(v) {
    const a = Math.abs(v);
    const digits = a >= 100 || Number.isInteger(v) ? 0 : a >= 10 ? 1 : 2;
    return v.toFixed(digits);
  }

  /** An exact count with thousands separators (table cells). */
  function fmtInt(v) {
    return typeof v === 'number' ? v.toLocaleString('en-US') : '–';
  }

  /** Local wall-clock time of a unix time in seconds, HH:MM:SS. */
  function fmtClock(t) {
    return t === null || t === undefined ? '–' : new Date(t * 1000).toTimeString().slice(0, 8);
  }

  function fmtSec(s) {
    if (typeof s !== 'number' || Number.isNaN(s)) return '–';
    if (s === 0) return '0';
    if (s < 1e-3) return (s * 1e6).toFixed(1) + ' µs';
    if (s < 1) return (s * 1e3).toFixed(2) + ' ms';
    return s.toFixed(3) + ' s';
  }

  // ---- profiling table ----------------------------------------------------------------

  function cell(text, className) {
    const td = document.createElement('td');
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }

  /** Renders the profiling state `p` ({order, events, message, summary}) into the page. */
  function renderProfiling(p) {
    const table = $('profiling-table');
    table.dataset.order = p.order;
    for (const b of document.querySelectorAll('#orderings button')) {
      b.setAttribute('aria-pressed', String(b.dataset.order === p.order));
    }
    const ths = [...table.querySelectorAll('thead tr:nth-child(2) th')];
    const activeIndex = ths.findIndex((th) => th.dataset.col === p.order);
    ths.forEach((th, i) => th.classList.toggle('active', i === activeIndex));

    const message = $('profiling-message');
    message.hidden = p.message === null;
    message.textContent = p.message || '';
    table.hidden = p.message !== null;

    const s = p.summary;
    $('profiling-summary').textContent = s && s.all_time
      ? 'all time: ' + fmtInt(s.all_time.count) + ' events, execution mean ' + fmtSec(s.all_time.execution_time_mean_in_sec)
        + (s.last1min ? ' · last minute: ' + fmtInt(s.last1min.count) + ' events, execution mean ' + fmtSec(s.last1min.execution_time_mean_in_sec) : '')
      : '';

    const rows = p.events.map((e) => {
      const a = e.all_time || {};
      const m = e.last1min || {};
      const n = a.execution_count || 0;
      const tr = document.createElement('tr');
      tr.dataset.event = e.event_name;
      tr.append(
        cell(e.event_name, 'name'),
        cell(fmtInt(n)),
        cell(fmtSec(a.execution_time_mean_in_sec * n)),
        cell(fmtSec(a.handler_time_mean_in_sec * n)),
        cell(fmtSec(a.io_wait_time_mean_in_sec * n)),
        cell(fmtSec(a.execution_time_mean_in_sec)),
        cell(fmtSec(a.handler_time_mean_in_sec)),
        cell(fmtSec(a.io_wait_time_mean_in_sec)),
        cell(fmtSec(a.execution_time_max_in_sec)),
        cell(fmtInt(a.timeout_count || 0)),
        cell(fmtInt(m.execution_count || 0)),
        cell(fmtSec(m.execution_time_mean_in_sec)),
      );
      if (activeIndex >= 0) tr.children[activeIndex + 1].classList.add('active');
      return tr;
    });
    if (rows.length === 0 && p.message === null) {
      const tr = document.createElement('tr');
      const td = cell('no events profiled yet', 'empty');
      td.colSpan = 12;
      tr.append(td);
      rows.push(tr);
    }
    table.tBodies[0].replaceChildren(...rows);
  }

  window.gsfDashboardView = { fmtNum, fmtInt, fmtClock, fmtSec, renderProfiling };
})();
