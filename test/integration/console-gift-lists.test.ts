/**
 * The example console's gift lists and error texts, with each half (managed and native): a long
 * users list of cached accounts (the native half walks it one fetch at a time, each continuation
 * run at once), an account listed more than once, and ids holding a NUL byte in error messages.
 */
import test from 'ava';
import { failure, startConsoleServer } from './_console.ts';

const V1 = '/cs-api/v1';
const GIFT = { title: 't', content: 'c', expires: '2030-01-01T00:00:00Z' };

for (const managed of [true, false]) {
  const side = managed ? 'managed' : 'native';
  test.serial(`[${side}] repeated targets are gifted once; 100,000 listed accounts; ids with a NUL byte in errors`, async (t) => {
    const s = await startConsoleServer(managed);
    t.teardown(() => s.stop());
    const ada = await s.player('ada');
    const grace = await s.player('grace');
    (await s.player('alan')).close();
    const send = async (method: string, url: string, body?: unknown): Promise<[number, unknown]> => {
      const r = await s.call(method, url, body);
      return [r.status, r.body];
    };
    const bag = async (name: string): Promise<unknown> => (await send('GET', `${V1}/characer/bag/${name}/`))[1];
    const gem = (quantity: number): unknown => ({ item_id: 'gem', name: 'Gem', quantity });
    const cid = ((await send('GET', `${V1}/account/ada/`))[1] as { character_id: string }).character_id;

    // A user listed twice is gifted once, by name or through its character.
    t.deepEqual(await send('POST', `${V1}/item/gift/`, { ...GIFT, target_type: 'account', items: [{ item_id: 'gem', quantity: 1 }], users: ['ada', 'ada', 'ada'] }),
      [204, undefined]);
    t.deepEqual(await bag('ada'), [gem(1)]);
    t.deepEqual(await send('POST', `${V1}/item/gift/`, {
      ...GIFT, target_type: 'account', items: [{ item_id: 'gem', quantity: 1 }, { item_id: 'gem', quantity: 2 }], users: ['grace', 'alan', 'grace', 'ada', 'alan'],
    }), [204, undefined]);
    t.deepEqual([await bag('ada'), await bag('grace'), await bag('alan')], [[gem(4)], [gem(3)], [gem(3)]]);
    t.deepEqual(await send('POST', `${V1}/item/gift/`, { ...GIFT, target_type: 'character', items: [{ item_id: 'sword', quantity: 1 }], users: [cid, cid] }),
      [204, undefined]);
    t.deepEqual(await bag('ada'), [gem(4), { item_id: 'sword', name: 'Sword', quantity: 1 }]);
    // A repeat does not hide a missing account: nothing is gifted.
    t.deepEqual(await send('POST', `${V1}/item/gift/`, { ...GIFT, target_type: 'account', items: [{ item_id: 'gem', quantity: 1 }], users: ['ada', 'ada', 'nobody'] }),
      [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'nobody'")]);
    t.deepEqual(await bag('ada'), [gem(4), { item_id: 'sword', name: 'Sword', quantity: 1 }]);

    // 100,000 listed accounts, all cached (about 700 KB of JSON): each of the three gets one gift.
    const names = ['ada', 'grace', 'alan'];
    const users = Array.from({ length: 100_000 }, (_, i) => names[i % 3]!);
    t.deepEqual(await send('POST', `${V1}/item/gift/`, { ...GIFT, target_type: 'account', items: [{ item_id: 'gem', quantity: 5 }], users }), [204, undefined]);
    t.deepEqual([(await bag('ada') as unknown[])[0], await bag('grace'), await bag('alan')], [gem(9), [gem(8)], [gem(8)]]);
    // The same list ending with an unknown account changes nothing.
    t.deepEqual(await send('POST', `${V1}/item/gift/`, { ...GIFT, target_type: 'account', items: [{ item_id: 'gem', quantity: 5 }], users: [...users, 'nobody'] }),
      [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'nobody'")]);
    t.deepEqual(await bag('grace'), [gem(8)]);

    // Ids with a NUL byte are quoted whole in error messages (JSON writes the NUL as \u0000).
    t.deepEqual(await send('GET', `${V1}/account/ada%00x/`), [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'ada\u0000x'")]);
    t.deepEqual(await send('PUT', `${V1}/account/ada/score/1%002/`),
      [400, failure('GSF_ERR_BAD_REQUEST', "path parameter 'value' must be text without NUL or unpaired surrogates")]);
    t.deepEqual(await send('GET', `${V1}/custom-queries/player-score/?name=ada%00x`),
      [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'ada\u0000x'")]);
    t.deepEqual(await send('POST', `${V1}/item/gift/`, { ...GIFT, target_type: 'account', items: [{ item_id: 'gem', quantity: 1 }], users: ['ada', 'ada\u0000x'] }),
      [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', "no account 'ada\u0000x'")]);
    // A long id is quoted whole, too.
    const long = 'x'.repeat(2000);
    t.deepEqual(await send('GET', `${V1}/account/${long}/`), [404, failure('GSF_ERR_RESOURCE_NOT_FOUND', `no account '${long}'`)]);
    // A character id no object can have (a NUL, too long) names no character: 404, not 500.
    for (const id of ['nope\u0000x', 'c'.repeat(300)]) {
      const [status, body] = await send('GET', `${V1}/character/${encodeURIComponent(id)}/`);
      t.is(status, 404, JSON.stringify(body));
      t.is((body as { error: string }).error, 'GSF_ERR_RESOURCE_NOT_FOUND');
    }

    await ada.close();
    await grace.close();
  });
}
