/*
 * Accounts: the search (conditions from GetUserSearchConditions, paged results) and the account
 * view (its fields, editable ones editable; logged in; banned; Ban, Reinstate, Force logout),
 * with its characters below it.
 */
/* global URLSearchParams */
import { V1, call, choices, get, path } from './console-api.js';
import { $, attempt, change, clearError, dropped, el, fieldList, latest, paged, say, show, valueGiven, words } from './console-ui.js';
import { renderCharacters } from './console-characters.js';

/** Fills the search conditions and wires the search form. */
export async function initAccounts() {
  $('search-form').addEventListener('submit', (e) => {
    e.preventDefault();
    void search();
  });
  await attempt(async () => {
    const [editable, missions] = await Promise.all([get(`${V1}/editable-fields/`), get(`${V1}/mission/categories/`)]);
    choices.editable = editable;
    choices.missions = missions;
  });
  await attempt(async () => {
    const conditions = await get(`${V1}/search-conditions/`);
    $('search-condition').replaceChildren(...conditions.map((c) => el('option', { value: c, text: c })));
  });
}

/** The id an account of a search result goes by: its `account_id` (or `id`), else its first field. */
function accountId(user) {
  if (user === null || typeof user !== 'object') return show(user);
  return show(user.account_id ?? user.id ?? Object.values(user)[0] ?? '');
}

async function search() {
  clearError();
  const condition = $('search-condition').value;
  const value = $('search-value').value;
  const load = async (pageNo, pageSize) => {
    const q = new URLSearchParams({ condition, value, page_no: String(pageNo), page_size: String(pageSize) });
    return (await get(`${V1}/account/search/?${q}`)).users;
  };
  const render = (users) => {
    if (users.length === 0) return el('p', { class: 'muted', text: words`No account where ${condition} is '${value}'.` });
    return el('ul', { class: 'results', 'aria-label': 'Search results' }, ...users.map((u) => {
      const id = accountId(u);
      const rest = u && typeof u === 'object' ? Object.entries(u).filter(([k]) => k !== 'account_id').map(([k, v]) => words`${k}: ${show(v)}`).join(', ') : '';
      return el('li', {},
        el('button', { type: 'button', text: id, 'aria-label': `Open account ${id}`, on: { click: () => openAccount(id) } }),
        rest ? el('span', { class: 'muted', text: ` ${rest}` }) : null);
    }));
  };
  if (await paged($('search-results'), 'search results', load, render).ready) say(words`Searched accounts where ${condition} is '${value}'.`);
  else say('');
}

/** Settles to the value, or to `{failed: message}` when the call failed (shown in its place). */
const settle = (p) => p.then((v) => v, (err) => ({ failed: err.message }));

const flag = (label, v, yes, no) => el('span', { class: `flag ${v === true ? 'on' : ''}`, text: `${label}: ${v === true ? yes : v === false ? no : `unknown (${v.failed})`}` });

/** Shows account `id` in the account view, and focuses its heading. */
export async function openAccount(id) {
  const box = $('account');
  clearError();
  // The account asked for last is the one shown, whichever answer comes last.
  const mine = latest(box);
  await attempt(async () => {
    const [user, loggedIn, banned] = await Promise.all([
      get(path('account', id)), settle(get(path('account', id, 'connection'))), settle(get(path('account', id, 'ban'))),
    ]);
    if (!mine()) {
      dropped();
      return;
    }
    const reopen = () => openAccount(id);
    // After a change the account is shown again, unless another was opened meanwhile: only what
    // was asked for last is shown.
    const post = (what, question, done) => async () => {
      if (await change(question, () => call('POST', path('account', id, what)), done) && mine()) await reopen();
    };
    const save = async (field, value) => {
      if (!valueGiven(field, value)) return;
      if (await change(words`Set ${field} of account ${id} to '${value}'?`, () => call('PUT', path('account', id, field, value)), words`Saved ${field} of account ${id}.`) && mine()) {
        await reopen();
      }
    };
    const actions = el('div', { class: 'row' },
      banned === true
        ? el('button', { type: 'button', text: 'Reinstate', on: { click: post('reinstate', words`Reinstate account ${id}? They can log in again.`, words`Reinstated ${id}.`) } })
        : el('button', { type: 'button', text: 'Ban', class: 'danger', on: { click: post('ban', words`Ban account ${id}? Their session is closed and they cannot log in until reinstated.`, words`Banned ${id}.`) } }),
      el('button', { type: 'button', text: 'Force logout', on: { click: post('logout', words`Force account ${id} to log out?`, words`Logged ${id} out.`) } }),
      el('button', { type: 'button', text: 'Refresh', 'aria-label': `Refresh account ${id}`, on: { click: reopen } }));
    const heading = el('h3', { id: 'account-title', tabindex: '-1', text: words`Account ${id}` });
    const characters = el('div', { class: 'characters' });
    box.replaceChildren(el('section', { class: 'account', 'aria-labelledby': 'account-title' },
      heading,
      el('p', { class: 'row' }, flag('Logged in', loggedIn, 'yes', 'no'), flag('Banned', banned, 'yes', 'no')),
      actions,
      fieldList('Account', user, choices.editable.account ?? [], save),
      characters));
    heading.focus();
    await renderCharacters(characters, id, mine);
  }, mine);
}
