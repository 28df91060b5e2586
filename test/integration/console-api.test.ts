/**
 * The operations console (`/cs-api/v1/`, SPEC 4.6) over the example arena, run twice: with the
 * managed handlers (plugins/arena/console.ts) and with the native ones (plugins/arena-console-
 * native, C), and once more with the C++ game (plugins/arena-native) and the C handlers. Every
 * route, every error, paging bounds and the registration gates get the same exact answers from
 * all three; bans, reinstatements and logouts are seen on live sessions.
 */
import test from 'ava';
import type { GsfClient } from '../../src/sdk/index.ts';
import { waitFor } from './_server.ts';
import { failure, startConsoleServer, type ConsoleServer } from './_console.ts';

const V1 = '/cs-api/v1';
const GIFT = { target_type: 'account', title: 'secret-title', content: 'secret-content', expires: '2030-01-01T00:00:00Z' };

interface State {
  s: ConsoleServer;
  side: 'managed' | 'native';
  ada: GsfClient;
  grace: GsfClient;
  /** ada's character id. */
  cid: string;
  day: string;
}

const servers: State[] = [];

for (const [managed, game] of [[true, 'managed'], [false, 'managed'], [false, 'native']] as const) {
  const side = managed ? 'managed' : 'native';
  const state = {} as State;
  const run = (title: string, fn: (t: import('ava').ExecutionContext, st: State) => Promise<void>): void => {
    test.serial(`[${side}${game === 'native' ? ', C++ game' : ''}] ${title}`, (t) => fn(t, state));
  };
  const call = (method: string, url: string, body?: unknown): ReturnType<ConsoleServer['call']> => state.s.call(method, url, body);
  const get = async (url: string): Promise<[number, unknown]> => {
    const r = await call('GET', url);
    return [r.status, r.body];
  };
  const send = async (method: string, url: string, body?: unknown): Promise<[number, unknown]> => {
    const r = await call(method, url, body);
    return [r.status, r.body];
  };
  const executions = async (op: string): Promise<number> => {
    const r = await call('GET', `/v1/counters/engine/event/profiling/each/cs-api.${op}`);
    return r.status === 404 ? 0 : (r.body as Record<string, { all_time: { execution_count: number } }>)[`cs-api.${op}`]!.all_time.execution_count;
  };
  /**
   * The count once it stops moving: an answer can reach the client a moment before its event's
   * profile is recorded, so a count read right after earlier requests may still rise.
   */
  const settledExecutions = async (op: string): Promise<number> => {
    let last = await executions(op);
    for (;;) {
      await new Promise((r) => setTimeout(r, 300));
      const now = await executions(op);
      if (now === last) return now;
      last = now;
    }
  };

  run('start: three players, ada clicks 30 times', async (t, st) => {
    st.side = side;
    st.s = await startConsoleServer(managed, {}, game);
    st.ada = await st.s.player('ada');
    for (let i = 0; i < 30; i++) await st.ada.request('click');
    st.day = new Date().toISOString().slice(0, 10);
    st.grace = await st.s.player('grace');
    (await st.s.player('alan')).close();
    t.true(st.s.logs().some((l) => l.includes(`DeployApiService: the ${side} console handlers serve /cs-api/v1/`)
      && l.includes(`the ${managed ? 'native' : 'managed'} ones are ignored`)));
  });

  run('search conditions (both paths) and search with paging', async (t) => {
    const conditions = ['name', 'name_prefix', 'nickname'];
    t.deepEqual(await get(`${V1}/search-conditions/`), [200, conditions]);
    t.deepEqual(await get(`${V1}/account/search-condition/`), [200, conditions]);
    t.deepEqual(await get(`${V1}/account/search/?condition=name_prefix&value=a`), [200, { users: [{ account_id: 'ada' }, { account_id: 'alan' }] }]);
    t.deepEqual(await get(`${V1}/account/search/?condition=name_prefix&value=a&page_size=1&page_no=1`), [200, { users: [{ account_id: 'alan' }] }]);
    t.deepEqual(await get(`${V1}/account/search/?condition=name_prefix&value=a&page_size=1&page_no=2`), [200, { users: [] }]);
    t.deepEqual(await get(`${V1}/account/search/?condition=name_prefix&value=a&page_size=100`), [200, { users: [{ account_id: 'ada' }, { account_id: 'alan' }] }]);
    t.deepEqual(await get(`${V1}/account/search/?condition=name&value=grace`), [200, { users: [{ account_id: 'grace' }] }]);
    t.deepEqual(await get(`${V1}/account/search/?condition=name&value=nobody`), [200, { users: [] }]);
    t.deepEqual(await get(`${V1}/account/search/?condition=nickname&value=ada`), [200, { users: [{ account_id: 'ada' }] }]);
    t.deepEqual(await get(`${V1}/account/search/?condition=bogus&value=x`),
      [400, failure('GSF_ERR_BAD_REQUEST', 'unknown search condition \'bogus\' (name, name_prefix, nickname)')]);
    t.deepEqual(await get(`${V1}/account/search/?value=x`), [400, failure('GSF_ERR_BAD_REQUEST', "query parameter 'condition' is required")]);
    t.deepEqual(await get(`${V1}/account/search/?condition=name`), [400, failure('GSF_ERR_BAD_REQUEST', "query parameter 'value' is required")]);
    for (const [query, message] of [
      ['page_size=101', "page_size must be an integer from 1 to 100 (got '101')"],
      ['page_size=0', "page_size must be an integer from 1 to 100 (got '0')"],
      ['page_size=-5', "page_size must be an integer from 1 to 100 (got '-5')"],
      ['page_size=2.5', "page_size must be an integer from 1 to 100 (got '2.5')"],
      ['page_no=-1', "page_no must be an integer >= 0 (got '-1')"],
      ['page_no=x', "page_no must be an integer >= 0 (got 'x')"],
      // A parameter given twice is refused, whichever route reads it, rather than one value picked.
      ['page_no=0&page_no=1', "query parameter 'page_no' must be given once, got 2 values"],
      ['value=b', "query parameter 'value' must be given once, got 2 values"],
    ]) {
      t.deepEqual(await get(`${V1}/account/search/?condition=name_prefix&value=a&${query}`), [400, failure('GSF_ERR_BAD_REQUEST', message!)], query);
    }
  });

  run('accounts: read, edit (editable fields only), connection and ban state', async (t, st) => {
    const [status, user] = await get(`${V1}/account/ada/`);
    t.is(status, 200);
    const u = user as Record<string, unknown>;
    t.regex(u.joined as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    t.regex(u.character_id as string, /^[0-9a-f-]{36}$/);
    st.cid = u.character_id as string;
    t.deepEqual(u, { account_id: 'ada', name: 'ada', score: 30, banned: false, logged_in: true, joined: u.joined, character_id: st.cid });
    t.deepEqual(await get(`${V1}/account/nobody/`), [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'nobody'")]);
    t.deepEqual(await send('PUT', `${V1}/account/alan/score/42/`), [204, undefined]);
    t.like((await get(`${V1}/account/alan/`))[1] as object, { score: 42, logged_in: false });
    t.deepEqual(await send('PUT', `${V1}/account/alan/score/abc/`), [400, failure('GSF_ERR_BAD_REQUEST', "score must be an integer >= 0 (got 'abc')")]);
    t.deepEqual(await send('PUT', `${V1}/account/nobody/score/1/`), [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'nobody'")]);
    // A field that is not editable never reaches the handler.
    const before = await settledExecutions('UpdateUser');
    t.deepEqual(await send('PUT', `${V1}/account/alan/banned/true/`),
      [400, failure('GSF_ERR_BAD_REQUEST', "account field 'banned' is not editable (editable: score)")]);
    await send('PUT', `${V1}/account/alan/score/7/`);
    await waitFor(async () => (await executions('UpdateUser')) === before + 1, 20000, 'one more UpdateUser event');
    t.deepEqual(await get(`${V1}/account/ada/connection/`), [200, true]);
    t.deepEqual(await get(`${V1}/account/alan/connection/`), [200, false]);
    t.deepEqual(await get(`${V1}/account/ada/ban/`), [200, false]);
    t.deepEqual(await get(`${V1}/account/nobody/ban/`), [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'nobody'")]);
    t.deepEqual(await send('DELETE', `${V1}/account/ada/`),
      [405, { ...failure('GSF_ERR_METHOD_NOT_ALLOWED', `method DELETE not allowed for ${V1}/account/ada/`) as object, allowed: ['GET', 'HEAD'] }]);
  });

  run('characters: list, read, edit, inventory info', async (t, st) => {
    t.deepEqual(await get(`${V1}/account/ada/character/`), [200, [{ character_id: st.cid, nickname: 'ada', level: 4 }]]);
    t.deepEqual(await get(`${V1}/account/nobody/character/`), [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'nobody'")]);
    t.deepEqual(await get(`${V1}/character/${st.cid}/`), [200, { character_id: st.cid, nickname: 'ada', level: 4, account_id: 'ada' }]);
    t.deepEqual(await get(`${V1}/character/nope/`), [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no character 'nope'")]);
    t.deepEqual(await send('PUT', `${V1}/character/${st.cid}/level/7/`), [204, undefined]);
    t.deepEqual(await send('PUT', `${V1}/character/${st.cid}/level/0/`), [400, failure('GSF_ERR_BAD_REQUEST', "level must be an integer from 1 to 100 (got '0')")]);
    t.deepEqual(await send('PUT', `${V1}/character/${st.cid}/nickname/grace/`), [409, failure('GSF_ERR_CONFLICT', "nickname 'grace' is taken")]);
    t.deepEqual(await send('PUT', `${V1}/character/${st.cid}/nickname/Ada/`), [204, undefined]);
    t.deepEqual(await send('PUT', `${V1}/character/${st.cid}/player/x/`),
      [400, failure('GSF_ERR_BAD_REQUEST', "character field 'player' is not editable (editable: level, nickname)")]);
    t.deepEqual(await send('PUT', `${V1}/character/nope/level/3/`), [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no character 'nope'")]);
    t.deepEqual(await get(`${V1}/character/${st.cid}/`), [200, { character_id: st.cid, nickname: 'Ada', level: 7, account_id: 'ada' }]);
    t.deepEqual(await get(`${V1}/account/search/?condition=nickname&value=Ada`), [200, { users: [{ account_id: 'ada' }] }]);
    t.deepEqual(await get(`${V1}/character/${st.cid}/inventory/`), [200, [{ type: 'bag', slots: ['ada'] }]]);
  });

  run('inventories: both paths, paging, gifts (giftable only), reclaiming', async (t, st) => {
    t.deepEqual(await get(`${V1}/characer/bag/ada/`), [200, [{ item_id: 'potion', name: 'Potion', quantity: 1 }]]);
    t.deepEqual(await get(`${V1}/character/bag/ada/`), [200, [{ item_id: 'potion', name: 'Potion', quantity: 1 }]]);
    t.deepEqual(await get(`${V1}/characer/box/ada/`), [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no inventory type 'box' (arena has 'bag')")]);
    t.deepEqual(await send('POST', `${V1}/item/gift/`, { ...GIFT, items: [{ item_id: 'gem', quantity: 2 }], users: ['ada', 'grace'] }), [204, undefined]);
    t.deepEqual(await send('POST', `${V1}/item/gift/`, { ...GIFT, target_type: 'character', items: [{ item_id: 'sword', quantity: 1 }], users: [st.cid] }),
      [204, undefined]);
    t.deepEqual(await send('POST', `${V1}/item/gift/`, { ...GIFT, items: [{ item_id: 'gem', quantity: 1 }], users: ['ada', 'nobody'] }),
      [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'nobody'")]);
    t.deepEqual(await send('POST', `${V1}/item/gift/`, { ...GIFT, target_type: 'character', items: [{ item_id: 'gem', quantity: 1 }], users: ['nope'] }),
      [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no character 'nope'")]);
    // Items not designated giftable: logged, the handler is not called.
    const before = await settledExecutions('GiveGift');
    const beforeAll = await settledExecutions('GiveGiftToAll');
    t.deepEqual(await send('POST', `${V1}/item/gift/`, { ...GIFT, items: [{ item_id: 'medal', quantity: 1 }, { item_id: 'crown', quantity: 1 }], users: ['ada'] }),
      [400, failure('GSF_ERR_BAD_REQUEST', 'items not designated giftable: medal, crown (giftable: gem, potion, sword)')]);
    t.deepEqual(await send('POST', `${V1}/item/gift-to-all/`, { ...GIFT, items: [{ item_id: 'medal', quantity: 1 }] }),
      [400, failure('GSF_ERR_BAD_REQUEST', 'items not designated giftable: medal (giftable: gem, potion, sword)')]);
    t.true(st.s.logs().some((l) => l.startsWith('E') && l.includes(`POST ${V1}/item/gift/: items not designated giftable: medal, crown`)
      && l.includes('the gift handler was not called')));
    t.true(st.s.logs().some((l) => l.startsWith('E') && l.includes(`POST ${V1}/item/gift-to-all/: items not designated giftable: medal `
      + '(giftable: gem, potion, sword); the gift handler was not called')));
    t.deepEqual(await send('POST', `${V1}/item/gift/`, { ...GIFT, items: [{ item_id: 'potion', quantity: 1 }], users: ['alan'] }), [204, undefined]);
    await waitFor(async () => (await executions('GiveGift')) === before + 1, 20000, 'one more GiveGift event');
    t.deepEqual(await send('POST', `${V1}/item/gift-to-all/`, { ...GIFT, items: [{ item_id: 'potion', quantity: 2 }] }), [204, undefined]);
    await waitFor(async () => (await executions('GiveGiftToAll')) === beforeAll + 1, 20000, 'one GiveGiftToAll event: the refused one never ran');
    const bag = [{ item_id: 'gem', name: 'Gem', quantity: 2 }, { item_id: 'potion', name: 'Potion', quantity: 3 }, { item_id: 'sword', name: 'Sword', quantity: 1 }];
    t.deepEqual(await get(`${V1}/characer/bag/ada/`), [200, bag]);
    t.deepEqual(await get(`${V1}/characer/bag/ada/?page_size=2`), [200, bag.slice(0, 2)]);
    t.deepEqual(await get(`${V1}/characer/bag/ada/?page_size=2&page_no=1`), [200, bag.slice(2)]);
    t.deepEqual(await get(`${V1}/characer/bag/ada/?page_size=500`), [400, failure('GSF_ERR_BAD_REQUEST', "page_size must be an integer from 1 to 100 (got '500')")]);
    t.deepEqual(await get(`${V1}/characer/bag/alan/`), [200, [{ item_id: 'potion', name: 'Potion', quantity: 3 }]]);
    for (const [body, message] of [
      ['{nope', 'request body is not valid JSON'],
      [[1], 'request body must be a JSON object'],
      [{ ...GIFT, users: ['ada'] }, "'items' must be a non-empty array of objects"],
      [{ ...GIFT, target_type: 'guild', items: [{ item_id: 'gem', quantity: 1 }], users: ['ada'] }, "'target_type' must be one of account, character"],
      [{ ...GIFT, items: [{ item_id: 'gem', quantity: 0 }], users: ['ada'] }, "'items[0].quantity' must be an integer from 1 to 1000000000"],
      [{ ...GIFT, expires: 'soon', items: [{ item_id: 'gem', quantity: 1 }], users: ['ada'] }, "'expires' must be an ISO-8601 date or date-time (got 'soon')"],
      [{ ...GIFT, items: [{ item_id: 'gem', quantity: 1 }], users: [] }, "'users' must be a non-empty array of non-empty strings"],
    ] as const) {
      t.deepEqual(await send('POST', `${V1}/item/gift/`, body), [400, failure('GSF_ERR_BAD_REQUEST', message)], message);
    }
    // Reclaiming: the quantity the console shows must be the bag's.
    t.deepEqual(await send('POST', `${V1}/inventory/bag/ada/item/gem/`, { expected_quantity: 5, reclaimed: 1 }),
      [409, failure('GSF_ERR_CONFLICT', 'the console shows 5 gem, the inventory holds 2')]);
    t.deepEqual(await send('POST', `${V1}/inventory/bag/ada/item/gem/`, { expected_quantity: 2, reclaimed: 3 }),
      [400, failure('GSF_ERR_BAD_REQUEST', 'cannot reclaim 3 gem: the inventory holds 2')]);
    t.deepEqual(await send('POST', `${V1}/inventory/bag/ada/item/gem/`, { expected_quantity: 2 }),
      [400, failure('GSF_ERR_BAD_REQUEST', "'reclaimed' must be an integer >= 1")]);
    t.deepEqual(await send('POST', `${V1}/inventory/bag/ada/item/gem/`, { expected_quantity: 2, reclaimed: 1 }), [204, undefined]);
    t.deepEqual(await send('POST', `${V1}/inventory/box/ada/item/gem/`, { expected_quantity: 1, reclaimed: 1 }),
      [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no inventory type 'box' (arena has 'bag')")]);
    // Several bags at once, all or nothing.
    const both = (graceReclaims: number): unknown => ({ inventories: [
      { type: 'bag', id: 'ada', items: [{ item_id: 'gem', expected_quantity: 1, reclaimed: 1 }, { item_id: 'potion', expected_quantity: 3, reclaimed: 1 }] },
      { type: 'bag', id: 'grace', items: [{ item_id: 'gem', expected_quantity: 2, reclaimed: graceReclaims }] },
    ] });
    t.deepEqual(await send('POST', `${V1}/inventory/`, both(3)), [400, failure('GSF_ERR_BAD_REQUEST', 'cannot reclaim 3 gem: the inventory holds 2')]);
    t.deepEqual(await get(`${V1}/characer/bag/ada/`), [200, [{ item_id: 'gem', name: 'Gem', quantity: 1 }, ...bag.slice(1)]]);
    t.deepEqual(await send('POST', `${V1}/inventory/`, both(2)), [204, undefined]);
    t.deepEqual(await get(`${V1}/characer/bag/ada/`), [200, [{ item_id: 'potion', name: 'Potion', quantity: 2 }, bag[2]]]);
    t.deepEqual(await get(`${V1}/characer/bag/grace/`), [200, [{ item_id: 'potion', name: 'Potion', quantity: 2 }]]);
    t.deepEqual(await send('POST', `${V1}/inventory/`, { inventories: [] }), [400, failure('GSF_ERR_BAD_REQUEST', "'inventories' must be a non-empty array of objects")]);
  });

  run('refunds take a purchase back from the bag, once per receipt, all or nothing', async (t) => {
    const bag = async (name: string): Promise<unknown> => (await get(`${V1}/characer/bag/${name}/`))[1];
    const potion = (quantity: number): unknown => ({ item_id: 'potion', name: 'Potion', quantity });
    const sword = { item_id: 'sword', name: 'Sword', quantity: 1 };
    t.deepEqual(await bag('ada'), [potion(2), sword]);
    const ada = { product: 'starter_pack', price: 0.99, account_id: 'ada', items: [{ item_id: 'sword', quantity: 1 }, { item_id: 'potion', quantity: 1 }] };
    // More than the bag holds: refused, and the sword stays too.
    t.deepEqual(await send('POST', `${V1}/refund/r-1/`, { ...ada, items: [{ item_id: 'sword', quantity: 1 }, { item_id: 'potion', quantity: 3 }] }),
      [409, failure('GSF_ERR_CONFLICT', 'cannot take back 3 potion: the inventory holds 2')]);
    t.deepEqual(await bag('ada'), [potion(2), sword]);
    t.deepEqual(await send('POST', `${V1}/refund/r-1/`, ada), [204, undefined]);
    t.deepEqual(await bag('ada'), [potion(1)]);
    t.deepEqual(await send('POST', `${V1}/refund/r-1/`, ada), [409, failure('GSF_ERR_CONFLICT', "receipt 'r-1' is already refunded")]);
    t.deepEqual(await send('POST', `${V1}/refund/r-1/`, { ...ada, items: [{ item_id: 'potion', quantity: 1 }] }),
      [409, failure('GSF_ERR_CONFLICT', "receipt 'r-1' is already refunded")]);
    t.deepEqual(await bag('ada'), [potion(1)]);
    // A second receipt: the same item twice in one log, the bag emptied of it.
    t.deepEqual(await send('POST', `${V1}/refund/r-2/`, { account_id: 'grace', items: [{ item_id: 'potion', quantity: 1 }, { item_id: 'potion', quantity: 1 }] }),
      [204, undefined]);
    t.deepEqual(await bag('grace'), []);
    t.deepEqual(await send('POST', `${V1}/refund/r-3/`, { account_id: 'nobody', items: [{ item_id: 'gem', quantity: 1 }] }),
      [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'nobody'")]);
  });

  run('refunds with a bad purchase log are refused and change nothing', async (t) => {
    const gem = [{ item_id: 'gem', quantity: 1 }];
    for (const [body, message] of [
      [undefined, 'request body is required: a JSON object'],
      ['{nope', 'request body is not valid JSON'],
      [[1], 'request body must be a JSON object'],
      [{ items: gem }, "purchase log 'account_id' must be a non-empty string"],
      [{ account_id: '', items: gem }, "purchase log 'account_id' must be a non-empty string"],
      [{ account_id: 7, items: gem }, "purchase log 'account_id' must be a non-empty string"],
      [{ account_id: 'ada' }, "purchase log 'items' must be a non-empty array of objects"],
      [{ account_id: 'ada', items: [] }, "purchase log 'items' must be a non-empty array of objects"],
      [{ account_id: 'ada', items: { gem: 1 } }, "purchase log 'items' must be a non-empty array of objects"],
      [{ account_id: 'ada', items: [...gem, 'potion'] }, "purchase log 'items[1]' must be an object"],
      [{ account_id: 'ada', items: [...gem, { item_id: 'crown', quantity: 1 }] }, "purchase log 'items[1].item_id' must be an arena item (gem, medal, potion, sword)"],
      [{ account_id: 'ada', items: [{ quantity: 1 }] }, "purchase log 'items[0].item_id' must be an arena item (gem, medal, potion, sword)"],
      [{ account_id: 'ada', items: [{ item_id: 'potion', quantity: 0 }] }, "purchase log 'items[0].quantity' must be an integer from 1 to 1000000"],
      [{ account_id: 'ada', items: [{ item_id: 'potion', quantity: 0.5 }] }, "purchase log 'items[0].quantity' must be an integer from 1 to 1000000"],
      [{ account_id: 'ada', items: [{ item_id: 'potion', quantity: '1' }] }, "purchase log 'items[0].quantity' must be an integer from 1 to 1000000"],
      [{ account_id: 'ada', items: [{ item_id: 'potion', quantity: 1000001 }] }, "purchase log 'items[0].quantity' must be an integer from 1 to 1000000"],
      [{ account_id: 'ada', items: [{ item_id: 'potion', quantity: 1e300 }] }, "purchase log 'items[0].quantity' must be an integer from 1 to 1000000"],
    ] as const) {
      t.deepEqual(await send('POST', `${V1}/refund/r-9/`, body), [400, failure('GSF_ERR_BAD_REQUEST', message)], message);
    }
    t.deepEqual(await get(`${V1}/characer/bag/ada/`), [200, [{ item_id: 'potion', name: 'Potion', quantity: 1 }]]);
    // r-9 was never recorded: it still refunds.
    t.deepEqual(await send('POST', `${V1}/refund/r-9/`, { account_id: 'ada', items: [{ item_id: 'potion', quantity: 1 }] }), [204, undefined]);
    t.deepEqual(await get(`${V1}/characer/bag/ada/`), [200, []]);
  });

  run('realtime notices reach connected sessions; undeclared categories are refused', async (t, st) => {
    const messages = [{ language_code: 'en', message: 'Server restarts at 03:00' }, { language_code: 'ko', message: '03:00 재시작' }];
    const toAda = st.ada.next('notice');
    const toGrace = st.grace.next('notice');
    t.deepEqual(await send('POST', `${V1}/notice/`, { category: 'all', color: '#FF8800', messages }), [204, undefined]);
    const expected = { category: 'all', color: '#FF8800', messages };
    t.deepEqual((await toAda).body, expected);
    t.deepEqual((await toGrace).body, expected);
    const inLobby = st.grace.next('notice');
    t.deepEqual(await send('POST', `${V1}/notice/`, { category: 'lobby', color: '#000000', messages }), [204, undefined]);
    t.deepEqual((await inLobby).body, { category: 'lobby', color: '#000000', messages });
    t.deepEqual(await send('POST', `${V1}/notice/`, { category: 'guild', color: '#000000', messages }),
      [400, failure('GSF_ERR_BAD_REQUEST', "notice category 'guild' is not declared (declared: all, lobby)")]);
    t.deepEqual(await send('POST', `${V1}/notice/`, { category: 'all', color: 'red', messages }),
      [400, failure('GSF_ERR_BAD_REQUEST', "'color' must be an RGB color #RRGGBB (got 'red')")]);
    // A long bad value is quoted cut, never half of a surrogate pair.
    t.deepEqual(await send('POST', `${V1}/notice/`, { category: 'all', color: `${'#'.repeat(79)}😀${'x'.repeat(5000)}`, messages }),
      [400, failure('GSF_ERR_BAD_REQUEST', `'color' must be an RGB color #RRGGBB (got '${'#'.repeat(79)}… (5081 characters)')`)]);
    t.deepEqual(await send('POST', `${V1}/notice/`, { category: 'all', color: '#000000', messages: [{ message: 'x' }] }),
      [400, failure('GSF_ERR_BAD_REQUEST', "'messages[0].language_code' must be a string")]);
  });

  run('missions: the daily one, normal and achievement ones with search and paging', async (t, st) => {
    const daily = {
      mission_id: 'daily_clicks', description: 'Click 100 times', period: 'daily', date: st.day, progress: 30, goal: 100, completed: false,
      rewarded: false, rewards: [{ item_id: 'medal', quantity: 1 }],
    };
    const m = `${V1}/character/${st.cid}/mission`;
    t.deepEqual(await get(`${m}/periodic/?period=daily&start_date=2020-01-01`), [200, [daily]]);
    t.deepEqual(await get(`${m}/periodic/?period=daily&start_date=2999-01-01`), [200, []]);
    t.deepEqual(await get(`${m}/periodic/?period=weekly&start_date=2020-01-01`), [200, []]);
    t.deepEqual(await get(`${m}/periodic/?period=daily&start_date=2020-01-01&page_no=1&page_size=1`), [200, []]);
    t.deepEqual(await get(`${m}/periodic/?period=hourly&start_date=2020-01-01`),
      [400, failure('GSF_ERR_BAD_REQUEST', "query parameter 'period' must be one of daily, weekly, monthly (got 'hourly')")]);
    t.deepEqual(await get(`${m}/periodic/?period=daily&start_date=2020-02-30`),
      [400, failure('GSF_ERR_BAD_REQUEST', "query parameter 'start_date' must be a date YYYY-MM-DD (got '2020-02-30')")]);
    t.deepEqual(await get(`${V1}/character/nope/mission/periodic/?period=daily&start_date=2020-01-01`),
      [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no character 'nope'")]);
    const clicks = [
      { mission_id: 'clicks_10', description: 'Click 10 times', category: 'clicks', progress: 10, goal: 10, completed: true },
      { mission_id: 'clicks_100', description: 'Click 100 times', category: 'clicks', progress: 30, goal: 100, completed: false },
      { mission_id: 'clicks_1000', description: 'Click 1000 times', category: 'clicks', progress: 30, goal: 1000, completed: false },
    ];
    t.deepEqual(await get(`${m}/?type=achievement&category=clicks`), [200, clicks]);
    t.deepEqual(await get(`${m}/?type=achievement&category=clicks&page_size=2&page_no=1`), [200, clicks.slice(2)]);
    t.deepEqual(await get(`${m}/?type=achievement&category=clicks&is_completed=false`), [200, clicks.slice(1)]);
    t.deepEqual(await get(`${m}/?type=achievement&category=clicks&condition=description&value=100`), [200, clicks.slice(1)]);
    t.deepEqual(await get(`${m}/?type=achievement&category=clicks&condition=mission_id&value=clicks_10`), [200, clicks]);
    t.deepEqual(await get(`${m}/?type=achievement&category=levels&is_completed=true`),
      [200, [{ mission_id: 'level_5', description: 'Reach level 5', category: 'levels', progress: 5, goal: 5, completed: true }]]);
    t.deepEqual(await get(`${m}/?type=normal&category=tutorial`),
      [200, [{ mission_id: 'first_click', description: 'Click once', category: 'tutorial', progress: 1, goal: 1, completed: true }]]);
    t.deepEqual(await get(`${m}/?type=achievement&category=clicks&condition=colour&value=x`),
      [400, failure('GSF_ERR_BAD_REQUEST', "unknown mission search condition 'colour' (mission_id, description)")]);
    t.deepEqual(await get(`${m}/?type=achievement&category=tutorial`),
      [400, failure('GSF_ERR_BAD_REQUEST', "achievement category 'tutorial' is not declared (declared: clicks, levels)")]);
    t.deepEqual(await get(`${m}/?type=daily&category=clicks`),
      [400, failure('GSF_ERR_BAD_REQUEST', "query parameter 'type' must be one of normal, achievement (got 'daily')")]);
    t.deepEqual(await get(`${m}/?type=normal&category=tutorial&is_completed=maybe`),
      [400, failure('GSF_ERR_BAD_REQUEST', "query parameter 'is_completed' must be one of true, false (got 'maybe')")]);
  });

  run('campaigns: begin and end change the game; unknown types are not implemented', async (t, st) => {
    const before = (await st.grace.request<{ score: number }>('click')).score;
    t.deepEqual(await send('POST', `${V1}/campaign/double_clicks/begin/`, { campaign_id: 'weekend' }), [204, undefined]);
    t.is((await st.grace.request<{ score: number }>('click')).score, before + 2);
    t.deepEqual(await send('POST', `${V1}/campaign/double_clicks/end/`, { campaign_id: 'weekend' }), [204, undefined]);
    t.is((await st.grace.request<{ score: number }>('click')).score, before + 3);
    t.deepEqual(await send('POST', `${V1}/campaign/happy_hour/begin/`, { campaign_id: 'x' }),
      [404, failure('GSF_ERR_NOT_IMPLEMENTED', `campaign type 'happy_hour' is not implemented by the ${side} console handlers`)]);
    t.deepEqual(await send('POST', `${V1}/campaign/double_clicks/begin/`, {}), [400, failure('GSF_ERR_BAD_REQUEST', "'campaign_id' must be a string")]);
  });

  run('custom queries: listed, request fields required, a warning without response fields', async (t, st) => {
    t.deepEqual(await get(`${V1}/custom-queries/`), [200, [
      { name: 'Player score', method: 'GET', uri: 'player-score', path: `${V1}/custom-queries/player-score/`, request_fields: ['name'], response_fields: ['name', 'score', 'banned'] },
      { name: 'Roster', method: 'GET', uri: 'roster', path: `${V1}/custom-queries/roster/`, request_fields: [], response_fields: null },
    ]]);
    t.deepEqual(await get(`${V1}/custom-queries/player-score/?name=alan`), [200, { name: 'alan', score: 7, banned: false }]);
    t.deepEqual(await get(`${V1}/custom-queries/player-score/?name=nobody`), [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'nobody'")]);
    const before = await settledExecutions('CustomQuery.player-score');
    t.deepEqual(await get(`${V1}/custom-queries/player-score/`), [400, failure('GSF_ERR_BAD_REQUEST', "custom query 'Player score' needs request field(s) name")]);
    t.true(st.s.logs().some((l) => l.startsWith('E') && l.includes("custom query 'Player score' needs request field(s) name; its handler was not called")));
    await get(`${V1}/custom-queries/player-score/?name=ada`);
    await waitFor(async () => (await executions('CustomQuery.player-score')) === before + 1, 20000, 'one more query event');
    t.deepEqual(await get(`${V1}/custom-queries/roster/`), [200, { names: ['ada', 'grace', 'alan'] }]);
    t.true(st.s.logs().some((l) => l.startsWith('W') && l.includes("custom query 'Roster' (GET /cs-api/v1/custom-queries/roster/) declares no response fields")));
  });

  run('what the console renders choices from', async (t) => {
    t.deepEqual(await get(`${V1}/editable-fields/`), [200, { account: ['score'], character: ['level', 'nickname'] }]);
    t.deepEqual(await get(`${V1}/item/giftable/`), [200, [{ item_id: 'gem', name: 'Gem' }, { item_id: 'potion', name: 'Potion' }, { item_id: 'sword', name: 'Sword' }]]);
    t.deepEqual(await get(`${V1}/notice/categories/`), [200, ['all', 'lobby']]);
    t.deepEqual(await get(`${V1}/mission/categories/`), [200, { normal: ['tutorial'], achievement: ['clicks', 'levels'] }]);
    t.deepEqual(await get(`${V1}/campaign/types/`), [200, ['double_clicks']]);
  });

  run('ban closes the session and refuses the next login until a reinstate; a logout closes it', async (t, st) => {
    const closed = st.ada.closed;
    t.deepEqual(await send('POST', `${V1}/account/ada/ban/`), [204, undefined]);
    t.deepEqual(await closed, { code: 4010, reason: 'banned by an operator' });
    t.deepEqual(await get(`${V1}/account/ada/ban/`), [200, true]);
    await waitFor(async () => (await get(`${V1}/account/ada/connection/`))[1] === false, 5000, 'ada logged out');
    const again = await st.s.connect();
    t.deepEqual(await again.request('hello', { name: 'ada' }), { error: "account 'ada' is banned" });
    t.deepEqual(await send('POST', `${V1}/account/ada/reinstate/`), [204, undefined]);
    t.deepEqual(await get(`${V1}/account/ada/ban/`), [200, false]);
    t.deepEqual(await again.request('hello', { name: 'ada' }), { name: 'ada', room: 'lobby' });
    t.deepEqual(await get(`${V1}/account/ada/connection/`), [200, true]);
    const loggedOut = again.closed;
    t.deepEqual(await send('POST', `${V1}/account/ada/logout/`), [204, undefined]);
    t.deepEqual(await loggedOut, { code: 4010, reason: 'logged out by an operator' });
    await waitFor(async () => (await get(`${V1}/account/ada/connection/`))[1] === false, 5000, 'ada logged out');
    t.deepEqual(await send('POST', `${V1}/account/nobody/ban/`), [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'nobody'")]);
    // The other session never noticed.
    t.is((await st.grace.request<{ score: number }>('click')).score > 0, true);
  });

  run('every call wrote one audit line, without bodies; events are profiled as cs-api.<Operation>', async (t, st) => {
    const lines = st.s.logs().filter((l) => l.includes('cs-api audit: '));
    t.is(lines.filter((l) => l.includes(`method=GET, path=${V1}/account/ada/, status=200, duration_in_ms=`)).length, 1);
    t.is(lines.filter((l) => l.includes(`method=POST, path=${V1}/refund/r-1/, status=`)).length, 4);
    t.is(lines.filter((l) => l.includes(`method=POST, path=${V1}/refund/r-1/, status=204`)).length, 1);
    t.is(lines.filter((l) => l.includes(`method=PUT, path=${V1}/account/alan/banned/true/, status=400`)).length, 1);
    t.true(lines.some((l) => l.includes(`method=POST, path=${V1}/item/gift/, status=204`)));
    t.false(st.s.logs().some((l) => l.includes('secret-title') || l.includes('secret-content')));
    const all = (await get('/v1/counters/engine/event/profiling/all'))[1] as Record<string, unknown>;
    for (const op of ['GetUser', 'SearchUsers', 'GiveGift', 'Refund', 'BanUser', 'GetCharacterMissionStatus', 'BeginCampaign']) t.truthy(all[`cs-api.${op}`], op);
    await st.grace.close();
    await st.s.stop();
  });
  servers.push(state);
}

test.after.always(async () => {
  for (const st of servers) await st.s?.stop();
});
