/*
 * The console page's building blocks: elements, tables, an editable field list, paging, the
 * status and error lines, and the confirmation every change asks for. Data is always set as
 * text, never as HTML.
 */
/* global document */

export const $ = (id) => document.getElementById(id);

/**
 * An element: `attrs` are attributes (`class`, `aria-label`, …), `text` (its text), `on`
 * (event listeners) or, for other names that are properties (`value`, `type`, `disabled`), set
 * as properties; children are nodes or strings.
 */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else if (k === 'on') for (const [type, fn] of Object.entries(v)) e.addEventListener(type, fn);
    else if (k in e && !k.includes('-')) e[k] = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

/** Bidi controls that open or close a scope: embeddings, overrides, isolates and their ends. */
const BIDI_SCOPES = /[\u202A-\u202E\u2066-\u2069]/g;

/**
 * A sentence with data in it (a tagged template): each value is wrapped in Unicode isolates
 * (FSI … PDI), so that a name holding a bidi override (U+202E) cannot turn the page's own words
 * around it backwards, in the page or in a confirmation. The value's own scope controls are
 * shown as `<U+202E>`: its PDI would otherwise close the page's isolate early (and let an
 * override after it reach the page's words), and the operator sees what the name holds.
 */
export const words = (strings, ...values) =>
  strings.reduce((out, s, i) => out + s + (i < values.length ? `\u2068${visibleBidi(String(values[i]))}\u2069` : ''), '');

/** `text` with each bidi scope control written out as `<U+XXXX>`. */
const visibleBidi = (text) =>
  text.replace(BIDI_SCOPES, (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase()}>`);

/** A value as the page shows it: strings as they are, the rest as JSON. */
export const show = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

/** Says what happened, in the status line (read out by screen readers). */
export function say(text) {
  $('status').textContent = text;
}

/** Shows an error: the API's message as the API words it, and its code. */
export function showError(err) {
  const box = $('error');
  box.replaceChildren(el('span', { class: 'message', text: err.message }));
  if (err.code) box.append(' ', el('span', { class: 'code', text: `(${err.code}, HTTP ${err.status})` }));
  box.hidden = false;
}

export function clearError() {
  $('error').hidden = true;
  $('error').replaceChildren();
}

/**
 * Runs `fn`, showing its error if it fails; resolves to whether it succeeded. `wanted` (from
 * `latest`) says whether the answer is still the one asked for last: an older load's failure
 * is not shown over a newer one's results.
 */
export async function attempt(fn, wanted = () => true) {
  try {
    await fn();
    return true;
  } catch (err) {
    if (wanted()) showError(err);
    else dropped();
    return false;
  }
}

/** Counts an answer dropped because a newer one was asked for (`data-dropped` on the body, for tests and the curious). */
export function dropped() {
  document.body.dataset.dropped = String(Number(document.body.dataset.dropped ?? 0) + 1);
}

/**
 * Whether a field's new value can be sent: the value travels as a path segment, and an empty
 * one would name another route, as `.` and `..` would (URLs fold them, encoded or not). Says so
 * when it cannot.
 */
export function valueGiven(field, value) {
  if (value === '') {
    showError({ message: words`Type a value for ${field}: an empty value cannot be saved.` });
    return false;
  }
  if (value === '.' || value === '..') {
    showError({ message: words`${field} cannot be '${value}' from this page: a URL path reads it as a step between folders.` });
    return false;
  }
  return true;
}

/** Asks the operator to confirm `text`; resolves to true for Confirm, false for Cancel or Escape. */
export function confirmChange(text) {
  const dialog = $('confirm');
  $('confirm-text').textContent = text;
  return new Promise((resolve) => {
    const done = (ok) => {
      $('confirm-ok').removeEventListener('click', yes);
      $('confirm-cancel').removeEventListener('click', no);
      dialog.removeEventListener('close', no);
      if (dialog.open) dialog.close();
      resolve(ok);
    };
    const yes = () => done(true);
    const no = () => done(false);
    $('confirm-ok').addEventListener('click', yes);
    $('confirm-cancel').addEventListener('click', no);
    dialog.addEventListener('close', no);
    dialog.showModal();
    $('confirm-cancel').focus();
  });
}

/**
 * A change: asks for confirmation of `question`, then runs `fn`; says `done` when it
 * succeeded. Resolves to whether the change was made.
 */
export async function change(question, fn, done) {
  if (!(await confirmChange(question))) {
    say('Cancelled.');
    return false;
  }
  clearError();
  const ok = await attempt(fn);
  // A refused change leaves no earlier success on the status line beside its error.
  say(ok ? done : '');
  return ok;
}

/**
 * A table of objects: one column per key seen (or `columns`), and `action(row)`'s nodes in a
 * last column when given.
 */
export function table(rows, { caption, columns, action } = {}) {
  const keys = columns ?? [...new Set(rows.flatMap((r) => (r && typeof r === 'object' ? Object.keys(r) : [])))];
  const head = el('tr', {}, ...keys.map((k) => el('th', { scope: 'col', text: k })), action ? el('th', { scope: 'col', text: 'actions' }) : null);
  const body = rows.map((r) => el('tr', {},
    ...keys.map((k) => el('td', { text: r && typeof r === 'object' && r[k] !== undefined ? show(r[k]) : '' })),
    action ? el('td', {}, ...action(r)) : null));
  return el('table', {}, caption ? el('caption', { text: caption }) : null, el('thead', {}, head), el('tbody', {}, ...body));
}

/**
 * The fields of an object, one row each; an editable field has an input and a Save button
 * that calls `save(field, value)`.
 */
export function fieldList(what, obj, editable, save) {
  const rows = Object.entries(obj).map(([k, v]) => {
    let value;
    if (editable.includes(k)) {
      const input = el('input', { value: show(v), 'aria-label': `${what} ${k}` });
      value = el('form', { class: 'inline', on: { submit: (e) => { e.preventDefault(); save(k, input.value); } } },
        input, el('button', { type: 'submit', 'aria-label': `Save ${k}`, text: 'Save' }));
    } else {
      value = show(v);
    }
    return el('tr', {}, el('th', { scope: 'row', text: k }), el('td', {}, value));
  });
  for (const k of editable) {
    if (k in obj) continue;
    const input = el('input', { 'aria-label': `${what} ${k}` });
    rows.push(el('tr', {}, el('th', { scope: 'row', text: k }), el('td', {},
      el('form', { class: 'inline', on: { submit: (e) => { e.preventDefault(); save(k, input.value); } } },
        input, el('button', { type: 'submit', 'aria-label': `Save ${k}`, text: 'Save' })))));
  }
  return el('table', { class: 'fields', 'aria-label': `${what} fields` }, el('tbody', {}, ...rows));
}

/**
 * A paged view in `box`: `load(pageNo, pageSize)` resolves to the page's rows, or to
 * `{ rows, total }` where the API counts them; `render(rows)` to its node. Previous and Next move
 * a page; Next is off on the last page (by `total`, else once a page comes back short). Only the
 * latest load of a box is shown: an answer that comes after a newer one (another page, another
 * search in the same box) is dropped. `ready` resolves once the first page is shown (true) or
 * failed to load (false: the box is emptied and the error shown); `reload()` shows the current
 * page again. `still()` says whether what the box belongs to is still shown (an account's bag:
 * its account is still the one asked for last): an answer that comes after is dropped too.
 */
export function paged(box, label, load, render, pageSize = 20, still = () => true) {
  let pageNo = 0;
  let shown = false;
  // `target` becomes the page shown once it loaded: a page that failed leaves the pager where it was.
  const show1 = async (target = pageNo) => {
    const latestOfBox = latest(box);
    const mine = () => latestOfBox() && still();
    let answer;
    const ok = await attempt(async () => { answer = await load(target, pageSize); }, mine);
    if (!mine()) {
      if (ok) dropped();
      return false;
    }
    if (!ok) {
      // A first page that failed shows nothing rather than what an earlier load of the box left.
      if (!shown) box.replaceChildren();
      return false;
    }
    shown = true;
    pageNo = target;
    const rows = Array.isArray(answer) ? answer : answer.rows;
    const last = Array.isArray(answer) || typeof answer.total !== 'number'
      ? rows.length < pageSize
      : (pageNo + 1) * pageSize >= answer.total;
    const prev = el('button', { type: 'button', text: 'Previous page', 'aria-label': `Previous page of ${label}`, disabled: pageNo === 0,
      on: { click: () => { void show1(pageNo - 1); } } });
    const next = el('button', { type: 'button', text: 'Next page', 'aria-label': `Next page of ${label}`, disabled: last,
      on: { click: () => { void show1(pageNo + 1); } } });
    box.replaceChildren(render(rows), el('div', { class: 'pager row' }, prev, el('span', { class: 'muted', text: `page ${pageNo + 1}` }), next));
    return true;
  };
  return { ready: show1(), reload: () => show1() };
}

/** Load numbers per box: `latest(box)` starts a load and returns whether it is still the box's latest. */
const loads = new WeakMap();
export function latest(box) {
  const n = (loads.get(box) ?? 0) + 1;
  loads.set(box, n);
  return () => loads.get(box) === n;
}
