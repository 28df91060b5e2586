/*
 * An account's characters: their fields (editable ones editable), their inventories (deleting
 * an item sends the quantity shown as `expected_quantity`) and their missions, periodic and not.
 */
/* global URLSearchParams */
import { V1, call, choices, get, path } from './console-api.js';
import { attempt, change, el, fieldList, paged, show, table, valueGiven, words } from './console-ui.js';

const today = () => new Date().toISOString().slice(0, 10);
const option = (v, text = v) => el('option', { value: v, text });

/**
 * Shows the characters of account `accountId` in `box`. `still()` says whether that account is
 * still the one shown: the answers of its loads that come after another was opened are dropped,
 * their failures included (not shown over the newer account).
 */
export async function renderCharacters(box, accountId, still = () => true) {
  const list = await get(path('account', accountId, 'character'));
  if (!still()) return;
  box.replaceChildren(...(list.length === 0 ? [el('p', { class: 'muted', text: 'No characters.' })] : []));
  for (const c of list) {
    const cid = show(c.character_id ?? c.id ?? '');
    const section = el('section', { class: 'character', 'aria-label': `Character ${cid}` });
    box.append(section);
    await renderCharacter(section, cid, still);
  }
}

async function renderCharacter(section, cid, still) {
  const character = await get(path('character', cid));
  if (!still()) return;
  const name = show(character.nickname ?? character.name ?? cid);
  const save = async (field, value) => {
    if (!valueGiven(field, value)) return;
    if (await change(words`Set ${field} of character ${name} to '${value}'?`, () => call('PUT', path('character', cid, field, value)), words`Saved ${field} of ${name}.`)) {
      if (still()) await attempt(() => renderCharacter(section, cid, still), still);
    }
  };
  const inventories = el('div');
  section.replaceChildren(
    el('h4', { text: words`Character ${name}` }),
    fieldList(words`Character ${name}`, character, choices.editable.character ?? [], save),
    el('h5', { text: 'Inventory' }), inventories,
    el('h5', { text: 'Missions' }), missions(cid, name, still));
  await attempt(() => renderInventories(inventories, cid, still), still);
}

async function renderInventories(box, cid, still) {
  const infos = await get(path('character', cid, 'inventory'));
  if (!still()) return;
  const ready = [];
  for (const { type, slots } of infos) {
    for (const slot of slots ?? []) {
      const part = el('div', { class: 'inventory' });
      box.append(part);
      const label = words`inventory ${type} ${slot}`;
      const view = paged(part, label, async (pageNo, pageSize) => {
        const q = new URLSearchParams({ page_no: String(pageNo), page_size: String(pageSize) });
        return get(`${V1}/characer/${encodeURIComponent(type)}/${encodeURIComponent(slot)}/?${q}`);
      }, (items) => (items.length === 0
        ? el('p', { class: 'muted', text: words`The ${type} ${slot} is empty.` })
        : table(items, { caption: words`${type} ${slot}`, action: (item) => deleteControls(type, slot, item, () => view.reload()) })), 20, still);
      ready.push(view.ready);
    }
  }
  await Promise.all(ready);
}

/** Quantity and Delete for one item: the request says how many the console showed. */
function deleteControls(type, slot, item, reload) {
  const id = show(item.item_id);
  const shown = item.quantity;
  const qty = el('input', { type: 'number', min: '1', max: String(shown), value: '1', class: 'qty', 'aria-label': `Quantity of ${id} to delete` });
  const remove = async () => {
    const reclaimed = Number(qty.value);
    let sent = false;
    await change(words`Delete ${reclaimed} ${id} from ${type} ${slot}? The console shows ${shown}.`,
      () => { sent = true; return call('POST', path('inventory', type, slot, 'item', id), { expected_quantity: shown, reclaimed }); },
      words`Deleted ${reclaimed} ${id} from ${type} ${slot}.`);
    // Done or refused (a 409 when the bag changed meanwhile), the bag is shown as it is now.
    if (sent) await reload();
  };
  return [qty, el('button', { type: 'button', text: 'Delete', 'aria-label': `Delete ${id}`, class: 'danger', on: { click: remove } })];
}

/** The two mission forms of a character, and where their answers are shown. */
function missions(cid, name, still) {
  const out = el('div', { class: 'missions' });
  const pagedMissions = (url, params, label) => paged(out, label, (pageNo, pageSize) => {
    const q = new URLSearchParams({ ...params, page_no: String(pageNo), page_size: String(pageSize) });
    return get(`${url}?${q}`);
  }, (rows) => (rows.length === 0 ? el('p', { class: 'muted', text: `No ${label}.` }) : table(rows, { caption: label })), 20, still).ready;

  const period = el('select', { 'aria-label': `Period of ${name}'s missions` }, option('daily'), option('weekly'), option('monthly'));
  const start = el('input', { type: 'date', value: today(), 'aria-label': `Start date (UTC) of ${name}'s missions` });
  const periodic = el('form', { class: 'row', on: { submit: (e) => {
    e.preventDefault();
    void pagedMissions(`${path('character', cid, 'mission', 'periodic')}`, { period: period.value, start_date: start.value }, `${period.value} missions`);
  } } }, period, start, el('button', { type: 'submit', text: 'Show periodic missions' }));

  const type = el('select', { 'aria-label': `Type of ${name}'s missions` }, option('normal'), option('achievement'));
  const category = el('select', { 'aria-label': `Category of ${name}'s missions` });
  const fillCategories = () => category.replaceChildren(...(choices.missions[type.value] ?? []).map((c) => option(c)));
  type.addEventListener('change', fillCategories);
  fillCategories();
  const completed = el('select', { 'aria-label': 'Completed' }, option('', 'completed or not'), option('true', 'completed'), option('false', 'not completed'));
  const condition = el('input', { 'aria-label': 'Mission search condition', placeholder: 'condition' });
  const value = el('input', { 'aria-label': 'Mission search value', placeholder: 'value' });
  const other = el('form', { class: 'row', on: { submit: (e) => {
    e.preventDefault();
    const params = { type: type.value, category: category.value, condition: condition.value, value: value.value };
    if (completed.value) params.is_completed = completed.value;
    void pagedMissions(`${path('character', cid, 'mission')}`, params, words`${type.value} missions in ${category.value}`);
  } } }, type, category, completed, condition, value, el('button', { type: 'submit', text: 'Show missions' }));
  return el('div', {}, periodic, other, out);
}
