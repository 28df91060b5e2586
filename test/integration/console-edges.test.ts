/**
 * Operations-console requests at their edges, each refused with a clear answer before anything
 * changes: refusals of the API server itself in the audit trail, gift bodies (a day that does
 * not exist, a quantity no bag can count exactly), path values holding NUL, purchase logs naming
 * a property every JavaScript object has, and account ids a URL path cannot hold.
 */
import test from 'ava';
import type { Game } from './_arena-games.ts';
import { failure, startConsoleServer, type ConsoleServer } from './_console.ts';

const V1 = '/cs-api/v1';
const TOKEN = 'audit-token-0123';
const GIFT = { target_type: 'account', title: 'Sorry', content: 'For the downtime' };
const NOT_AN_ITEM = failure('GSF_ERR_BAD_REQUEST', "purchase log 'items[0].item_id' must be an arena item (gem, medal, potion, sword)");

test.serial('changes refused before their handler (401, 405, 413) enter the audit trail and write an audit line', async (t) => {
  const s = await startConsoleServer(true, { ApiService: { api_service_token: TOKEN, api_service_max_body_bytes: 64 } });
  const auth = { Authorization: `Bearer ${TOKEN}` };
  try {
    const ada = await s.player('ada');
    t.is((await s.call('POST', `${V1}/account/ada/ban/`, undefined, { Authorization: 'Bearer guessed', 'X-Gsf-Operator': 'mallory' })).status, 401);
    t.is((await s.call('DELETE', `${V1}/account/ada/`, undefined, { ...auth, 'X-Gsf-Operator': 'anna' })).status, 405);
    const big = { category: 'all', color: '#000000', messages: [{ language_code: 'en', message: 'x'.repeat(100) }] };
    t.is((await s.call('POST', `${V1}/notice/`, big, { ...auth, 'X-Gsf-Operator': 'anna' })).status, 413);
    const trail = (await s.call('GET', `${V1}/audit/`, undefined, auth)).body as { total: number; entries: Array<Record<string, unknown>> };
    t.deepEqual(trail.entries.map((e) => [e.method, e.path, e.status]), [
      ['POST', `${V1}/notice/`, 413],
      ['DELETE', `${V1}/account/ada/`, 405],
      ['POST', `${V1}/account/ada/ban/`, 401],
    ]);
    t.is(trail.total, 3);
    const lines = s.logs().filter((l) => l.includes('cs-api audit: '));
    for (const [method, p, status] of [['POST', `${V1}/account/ada/ban/`, 401], ['DELETE', `${V1}/account/ada/`, 405], ['POST', `${V1}/notice/`, 413]]) {
      t.is(lines.filter((l) => l.includes(`method=${method}, path=${p}, status=${status}`)).length, 1, `${method} ${p}`);
    }
    await ada.close();
  } finally {
    await s.stop();
  }
});

for (const managed of [true, false]) {
  const side = managed ? 'managed' : 'native';

  test.serial(`[${side}] a gift expiring on a day that does not exist is refused`, async (t) => {
    const s = await startConsoleServer(managed);
    try {
      const ada = await s.player('ada');
      for (const expires of ['2030-02-30', '2030-02-31T10:00:00Z', '2030-04-31', '2030-01-01T24:00Z']) {
        const r = await s.call('POST', `${V1}/item/gift/`, { ...GIFT, expires, items: [{ item_id: 'gem', quantity: 1 }], users: ['ada'] });
        t.deepEqual([r.status, r.body], [400, failure('GSF_ERR_BAD_REQUEST', `'expires' must be an ISO-8601 date or date-time (got '${expires}')`)], expires);
      }
      t.deepEqual((await s.call('GET', `${V1}/characer/bag/ada/`)).body, []);
      await ada.close();
    } finally {
      await s.stop();
    }
  });

  test.serial(`[${side}] a gift quantity past what a bag can count exactly is a 400, not a later 500 for every gift`, async (t) => {
    const s = await startConsoleServer(managed);
    try {
      const ada = await s.player('ada');
      const grace = await s.player('grace');
      const huge = await s.call('POST', `${V1}/item/gift/`, { ...GIFT, expires: '2030-01-01', items: [{ item_id: 'sword', quantity: Number.MAX_SAFE_INTEGER }], users: ['grace'] });
      t.deepEqual([huge.status, (huge.body as { error?: string } | undefined)?.error], [400, 'GSF_ERR_BAD_REQUEST']);
      t.deepEqual((await s.call('GET', `${V1}/characer/bag/grace/`)).body, []);
      // Gifts to everyone keep working.
      const all = await s.call('POST', `${V1}/item/gift-to-all/`, { ...GIFT, expires: '2030-01-01', items: [{ item_id: 'sword', quantity: 1 }] });
      t.deepEqual([all.status, all.body], [204, undefined]);
      t.deepEqual((await s.call('GET', `${V1}/characer/bag/ada/`)).body, [{ item_id: 'sword', name: 'Sword', quantity: 1 }]);
      await ada.close();
      await grace.close();
    } finally {
      await s.stop();
    }
  });
}

for (const managed of [true, false]) {
  const side = managed ? 'managed' : 'native';
  test.serial(`[${side}] a nickname holding NUL is a 400 and the nickname stays`, async (t) => {
    const s = await startConsoleServer(managed);
    try {
      const ada = await s.player('ada');
      const cid = ((await s.call('GET', `${V1}/account/ada/`)).body as { character_id: string }).character_id;
      const r = await s.call('PUT', `${V1}/character/${cid}/nickname/a%00b/`);
      t.deepEqual([r.status, (r.body as { error?: string }).error], [400, 'GSF_ERR_BAD_REQUEST']);
      t.deepEqual((await s.call('GET', `${V1}/character/${cid}/`)).body, { character_id: cid, nickname: 'ada', level: 1, account_id: 'ada' });
      await ada.close();
    } finally {
      await s.stop();
    }
  });
}

{
  const managed = true;
  test.serial(`[managed] a purchase log naming an Object.prototype property is refused and the receipt stays unused`, async (t) => {
    const s: ConsoleServer = await startConsoleServer(managed);
    try {
      const ada = await s.player('ada');
      for (let i = 0; i < 25; i++) await ada.request('click'); // a potion every 25 clicks
      const bag = [{ item_id: 'potion', name: 'Potion', quantity: 1 }];
      t.deepEqual((await s.call('GET', `${V1}/characer/bag/ada/`)).body, bag);
      for (const [receipt, item] of [['r-proto', '__proto__'], ['r-ctor', 'constructor'], ['r-str', 'toString']]) {
        const r = await s.call('POST', `${V1}/refund/${receipt}/`, { account_id: 'ada', items: [{ item_id: item, quantity: 1 }] });
        t.deepEqual([r.status, r.body], [400, NOT_AN_ITEM], item);
      }
      t.deepEqual((await s.call('GET', `${V1}/characer/bag/ada/`)).body, bag);
      // The refused receipt was never recorded: a real refund under it still goes through.
      const real = await s.call('POST', `${V1}/refund/r-proto/`, { account_id: 'ada', items: [{ item_id: 'potion', quantity: 1 }] });
      t.deepEqual([real.status, real.body], [204, undefined]);
      t.deepEqual((await s.call('GET', `${V1}/characer/bag/ada/`)).body, []);
      await ada.close();
    } finally {
      await s.stop();
    }
  });
}

for (const game of ['managed', 'native'] as Game[]) {
  test.serial(`[${game}] hello refuses the names '.' and '..' (a URL path cannot hold them) and takes '...'`, async (t) => {
    const s = await startConsoleServer(game === 'managed', {}, game);
    try {
      for (const name of ['.', '..', ' .. ']) {
        const c = await s.connect();
        const err = await t.throwsAsync(c.request('hello', { name }));
        t.is(err.message, "the handler of 'hello' failed", JSON.stringify(name));
        await c.close();
      }
      const dots = await s.connect();
      t.deepEqual(await dots.request('hello', { name: '...' }), { name: '...', room: 'lobby' });
      const user = await s.call('GET', '/cs-api/v1/account/.../');
      t.is(user.status, 200);
      t.like(user.body as object, { account_id: '...', name: '...', banned: false });
      t.deepEqual((await s.call('GET', '/cs-api/v1/account/../')).status, 404);
      await dots.close();
    } finally {
      await s.stop();
    }
  });
}
