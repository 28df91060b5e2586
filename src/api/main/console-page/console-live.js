/*
 * Live operations: gifts (to listed users or to everyone, with the giftable items), refunds by
 * receipt, realtime notices (declared categories, a colour, a message per language),
 * campaigns (begin and end of the declared types) and the registered custom queries, each a
 * form built from its request fields.
 */
/* global document, URLSearchParams */
import { V1, call, get, path } from './console-api.js';
import { $, attempt, change, clearError, el, say, show, table, words } from './console-ui.js';

const option = (v, text = v) => el('option', { value: v, text });
const onSubmit = (form, fn) => form.addEventListener('submit', (e) => {
  e.preventDefault();
  void fn(e);
});

/** Reads the choices the serving side declares and wires every form. */
export async function initLive() {
  await Promise.all([initGift(), initNotice(), initCampaign(), initQueries()]);
  onSubmit($('refund-form'), refund);
}

async function initGift() {
  // A week from now, in the browser's time zone, as the datetime-local input wants it.
  const week = new Date(Date.now() + 7 * 86400_000 - new Date().getTimezoneOffset() * 60_000);
  $('gift-expires').value = week.toISOString().slice(0, 16);
  await attempt(async () => {
    const items = await get(`${V1}/item/giftable/`);
    $('gift-items').replaceChildren(el('legend', { text: 'Items (quantity)' }), ...items.map(({ item_id, name }) => el('label', {},
      `${name ?? item_id} `, el('input', { type: 'number', min: '0', value: '0', class: 'qty', 'data-item': item_id, 'aria-label': `Quantity of ${name ?? item_id}` }))));
  });
  onSubmit($('gift-form'), sendGift);
}

async function sendGift() {
  const toAll = document.querySelector('input[name="gift-to"]:checked')?.value === 'all';
  const items = [...$('gift-items').querySelectorAll('input[data-item]')]
    .map((i) => ({ item_id: i.dataset.item, quantity: Number(i.value) }))
    .filter((i) => i.quantity !== 0);
  // One id per line, exactly as typed: an account id may hold a comma or a space.
  const users = $('gift-users').value.split(/\r?\n/).filter((u) => u !== '');
  const expires = $('gift-expires').value;
  const body = {
    target_type: $('gift-target').value, title: $('gift-title-text').value, content: $('gift-content').value,
    // The local date and time the operator chose, as UTC.
    expires: Number.isNaN(Date.parse(expires)) ? expires : new Date(expires).toISOString(), items,
  };
  if (!toAll) body.users = users;
  const what = items.map((i) => words`${i.quantity} ${i.item_id}`).join(', ') || 'nothing';
  // Each id isolated on its own, so the list's commas stay the page's.
  const whom = toAll ? words`every ${body.target_type}` : `${words`${body.target_type}`}(s) ${users.map((u) => words`${u}`).join(', ')}`;
  await change(`Gift ${what} to ${whom}?`, () => call('POST', `${V1}/item/${toAll ? 'gift-to-all' : 'gift'}/`, body), `Gift sent to ${whom}.`);
}

async function refund() {
  const receipt = $('refund-receipt').value;
  // The purchase log goes as it was typed: the API says what is wrong with it.
  await change(words`Refund receipt ${receipt}?`, () => call('POST', path('refund', receipt), $('refund-log').value), words`Refunded receipt ${receipt}.`);
}

function messageRow(language = 'en') {
  const row = el('div', { class: 'row message' });
  row.append(
    el('input', { class: 'lang', value: language, 'aria-label': 'Language code', required: true }),
    el('input', { class: 'text', 'aria-label': 'Message', required: true }),
    el('button', { type: 'button', text: 'Remove', 'aria-label': 'Remove this language', on: { click: () => row.remove() } }));
  return row;
}

async function initNotice() {
  $('notice-messages').append(messageRow());
  $('notice-add').addEventListener('click', () => {
    const row = messageRow('');
    $('notice-messages').append(row);
    row.querySelector('input').focus();
  });
  await attempt(async () => {
    $('notice-category').replaceChildren(...(await get(`${V1}/notice/categories/`)).map((c) => option(c)));
  });
  onSubmit($('notice-form'), async () => {
    const messages = [...$('notice-messages').querySelectorAll('.message')]
      .map((r) => ({ language_code: r.querySelector('.lang').value, message: r.querySelector('.text').value }));
    const category = $('notice-category').value;
    const color = $('notice-color').value.toUpperCase();
    // Not nested: `words` shows a value's own isolates as text.
    const to = category === 'all' ? 'every session' : words`category ${category}`;
    await change(`Send a notice to ${to}: "${words`${messages.map((m) => m.message).join(' / ')}`}"?`,
      () => call('POST', `${V1}/notice/`, { category, color, messages }), words`Notice sent to ${category}.`);
  });
}

async function initCampaign() {
  await attempt(async () => {
    $('campaign-type').replaceChildren(...(await get(`${V1}/campaign/types/`)).map((c) => option(c)));
  });
  onSubmit($('campaign-form'), async (e) => {
    const phase = e.submitter?.value === 'end' ? 'end' : 'begin';
    const type = $('campaign-type').value;
    const id = $('campaign-id').value;
    await change(`${phase === 'begin' ? 'Begin' : 'End'} ${words`campaign ${id} of type ${type}?`}`,
      () => call('POST', path('campaign', type, phase), { campaign_id: id }), `${words`Campaign ${id}`} ${phase === 'begin' ? 'began' : 'ended'}.`);
  });
}

async function initQueries() {
  await attempt(async () => {
    const queries = await get(`${V1}/custom-queries/`);
    $('queries').replaceChildren(...(queries.length === 0 ? [el('p', { class: 'muted', text: 'No custom query is registered.' })] : queries.map(queryForm)));
  });
}

/** One custom query: an input per request field; its answer as a table. */
function queryForm(q) {
  const inputs = q.request_fields.map((f) => el('input', { name: f, 'aria-label': `${q.name}: ${f}` }));
  const out = el('div', { class: 'query-answer', 'aria-live': 'polite' });
  const form = el('form', { class: 'card', 'aria-label': q.name },
    el('h4', { text: q.name }), el('p', { class: 'muted', text: `${q.method} ${q.path}` }),
    ...q.request_fields.map((f, i) => el('label', {}, `${f} `, inputs[i])),
    el('button', { type: 'submit', text: 'Run', 'aria-label': `Run ${q.name}` }), out);
  onSubmit(form, async () => {
    clearError();
    const fields = Object.fromEntries(inputs.map((i) => [i.name, i.value]));
    const run = async () => {
      const answer = q.method === 'GET' || q.method === 'DELETE'
        ? await call(q.method, `${q.path}?${new URLSearchParams(fields)}`)
        : await call(q.method, q.path, fields);
      const rows = Array.isArray(answer) ? answer : answer === undefined ? [] : [answer];
      out.replaceChildren(rows.every((r) => r && typeof r === 'object') ? table(rows) : el('pre', { text: show(answer) }));
    };
    // An answer shown belongs to the last run: one that failed shows none (the error says why).
    const runOrClear = async () => {
      try {
        await run();
      } catch (err) {
        out.replaceChildren();
        throw err;
      }
    };
    // A query that is not a GET may change something: it asks first, as every change does.
    if (q.method === 'GET') {
      if (await attempt(runOrClear)) say(words`Ran ${q.name}.`);
    } else {
      await change(words`Run ${q.name} (${q.method})?`, runOrClear, words`Ran ${q.name}.`);
    }
  });
  return form;
}
