/**
 * A reload replaces the plugin's console registrations and REST routes at the switch: new
 * operations and routes answer, removed ones are gone, changed rules apply; a new version whose
 * routes or console names clash with another plugin's or gsf's is refused and the old one serves.
 */
import test from 'ava';
import path from 'node:path';
import { fixtures } from './_server.ts';
import { startSessionServer, apiUrl, type SessionServer } from './_session.ts';
import { PLUGIN, get, newPluginDir, post, writePlugin } from './_reload.ts';

const V1 = `
    api.console.registerDeployApiHandler({ getUser: ({ id }, res) => res.ok({ id, v: 1 }) });
    api.console.setEditableFieldsForUser(['nickname']);
    api.console.setGiftableItems([['sword', 'Sword']]);
    api.console.setRealtimeNoticeCategory(['maintenance']);
    api.console.registerCampaignType('old-campaign', () => undefined, () => undefined);
    api.console.registerCustomQueryHandler('Old', 'GET', 'tools/old', [], ['v'], (_req, res) => res.ok({ v: 1 }));
    api.console.registerCustomQueryHandler('Kept', 'POST', 'tools/kept', ['a'], ['v'], (_req, res) => res.ok({ v: 1 }));
    api.http.route('GET', '/reloadable/old', (_req, res) => res.json({ v: 1 }));
    api.http.route('GET', '/reloadable/kept/{id}', (req, res) => res.json({ id: req.params.id, v: 1 }));`;

const V2 = `
    api.console.registerDeployApiHandler({
      getUser: ({ id }, res) => res.ok({ id, v: 2 }),
      getUserBanned: (_req, res) => res.ok(false),
    });
    api.console.setEditableFieldsForUser(['level']);
    api.console.setEditableFieldsForCharacter(['title']);
    api.console.setGiftableItems([['shield', 'Shield']]);
    api.console.registerCampaignType('new-campaign', () => undefined, () => undefined);
    api.console.registerCustomQueryHandler('New', 'GET', 'tools/new', [], ['v'], (_req, res) => res.ok({ v: 2 }));
    api.console.registerCustomQueryHandler('Kept', 'POST', 'tools/kept', ['b'], ['v'], (_req, res) => res.ok({ v: 2 }));
    api.http.route('GET', '/reloadable/new', (_req, res) => res.json({ v: 2 }));
    api.http.route('GET', '/reloadable/kept/{id}', (req, res) => res.json({ id: req.params.id, v: 2 }));`;

async function call(s: SessionServer, method: string, route: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${apiUrl(s)}${route}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) as unknown };
}

const notImplemented = (op: string): unknown => ({
  status: 404, body: { error: 'GSF_ERR_NOT_IMPLEMENTED', message: `operation ${op} is not implemented by the managed console handlers` },
});
const noRoute = (method: string, route: string): unknown => ({
  status: 404, body: { error: 'GSF_ERR_NOT_FOUND', message: `no route for ${method} ${route}` },
});

test.serial('operations, rules, custom queries and routes the new version adds, changes or removes take effect at the switch', async (t) => {
  const dir = newPluginDir({ version: '1.0.0', register: V1 });
  const s = await startSessionServer({ DeployApiService: {} }, [dir]);
  try {
    // Version 1 as registered at start.
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/account/a1'), { status: 200, body: { id: 'a1', v: 1 } });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/account/a1/ban'), notImplemented('GetUserBanned'));
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/editable-fields'), { status: 200, body: { account: ['nickname'], character: [] } });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/item/giftable'), { status: 200, body: [{ item_id: 'sword', name: 'Sword' }] });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/campaign/types'), { status: 200, body: ['old-campaign'] });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/custom-queries/tools/old'), { status: 200, body: { v: 1 } });
    t.deepEqual(await call(s, 'POST', '/cs-api/v1/custom-queries/tools/kept', { a: 1 }), { status: 200, body: { v: 1 } });
    t.deepEqual(await call(s, 'GET', '/reloadable/old'), { status: 200, body: { v: 1 } });
    t.deepEqual(await call(s, 'GET', '/reloadable/kept/7'), { status: 200, body: { id: '7', v: 1 } });
    t.deepEqual(await call(s, 'GET', '/reloadable/new'), noRoute('GET', '/reloadable/new'));

    writePlugin(dir, { version: '2.0.0', register: V2 });
    const reloaded = await post(s, '/v1/plugins/reload');
    t.is(reloaded.status, 200, JSON.stringify(reloaded.body));
    t.like(reloaded.body, { reloaded: [{ name: PLUGIN, version: '2.0.0' }], warnings: [] });

    // Changed handler code, a new operation, and the old rules replaced by the new ones.
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/account/a1'), { status: 200, body: { id: 'a1', v: 2 } });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/account/a1/ban'), { status: 200, body: false });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/editable-fields'), { status: 200, body: { account: ['level'], character: ['title'] } });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/item/giftable'), { status: 200, body: [{ item_id: 'shield', name: 'Shield' }] });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/notice/categories'), { status: 200, body: ['all'] });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/campaign/types'), { status: 200, body: ['new-campaign'] });
    t.deepEqual(await call(s, 'POST', '/cs-api/v1/campaign/old-campaign/begin', { campaign_id: 'c1' }), {
      status: 404, body: { error: 'GSF_ERR_NOT_IMPLEMENTED', message: "campaign type 'old-campaign' is not implemented by the managed console handlers" },
    });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/custom-queries'), {
      status: 200, body: [
        { name: 'New', method: 'GET', uri: 'tools/new', path: '/cs-api/v1/custom-queries/tools/new/', request_fields: [], response_fields: ['v'] },
        { name: 'Kept', method: 'POST', uri: 'tools/kept', path: '/cs-api/v1/custom-queries/tools/kept/', request_fields: ['b'], response_fields: ['v'] },
      ],
    });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/custom-queries/tools/old'), noRoute('GET', '/cs-api/v1/custom-queries/tools/old'));
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/custom-queries/tools/new'), { status: 200, body: { v: 2 } });
    // The kept query checks the new version's request fields.
    t.deepEqual(await call(s, 'POST', '/cs-api/v1/custom-queries/tools/kept', { a: 1 }), {
      status: 400, body: { error: 'GSF_ERR_BAD_REQUEST', message: "custom query 'Kept' needs request field(s) b" },
    });
    t.deepEqual(await call(s, 'POST', '/cs-api/v1/custom-queries/tools/kept', { b: 1 }), { status: 200, body: { v: 2 } });

    // Routes: the removed one is gone, the added one answers, the kept one runs the new code.
    t.deepEqual(await call(s, 'GET', '/reloadable/old'), noRoute('GET', '/reloadable/old'));
    t.deepEqual(await call(s, 'GET', '/reloadable/new'), { status: 200, body: { v: 2 } });
    t.deepEqual(await call(s, 'GET', '/reloadable/kept/8'), { status: 200, body: { id: '8', v: 2 } });

    // Back to version 1: everything returns, nothing of version 2 is left.
    writePlugin(dir, { version: '3.0.0', register: V1 });
    t.is((await post(s, '/v1/plugins/reload')).status, 200);
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/account/a1/ban'), notImplemented('GetUserBanned'));
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/editable-fields'), { status: 200, body: { account: ['nickname'], character: [] } });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/notice/categories'), { status: 200, body: ['all', 'maintenance'] });
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/custom-queries/tools/new'), noRoute('GET', '/cs-api/v1/custom-queries/tools/new'));
    t.deepEqual(await call(s, 'GET', '/cs-api/v1/custom-queries/tools/old'), { status: 200, body: { v: 1 } });
    t.deepEqual(await call(s, 'GET', '/reloadable/new'), noRoute('GET', '/reloadable/new'));
    t.deepEqual(await call(s, 'GET', '/reloadable/old'), { status: 200, body: { v: 1 } });
  } finally {
    await s.stop();
  }
});

test.serial('a new version whose route or console name another plugin or gsf owns is refused, and the old one keeps serving', async (t) => {
  // console-probe implements getUser and the custom query POST tools/echo.
  const dir = newPluginDir({ version: '1.0.0', register: `
    api.console.registerDeployApiHandler({ getCharacter: ({ id }, res) => res.ok({ id, v: 1 }) });
    api.http.route('GET', '/reloadable/kept/{id}', (req, res) => res.json({ id: req.params.id, v: 1 }));` });
  const s = await startSessionServer({ DeployApiService: {} }, [path.join(fixtures, 'plugins', 'console-probe'), dir]);
  try {
    const cases = [
      {
        register: `    api.http.route('GET', '/v1/status', (_req, res) => res.json({}));`,
        cause: 'GSF_ERR_ROUTE_CONFLICT', message: `plugin '${PLUGIN}' route GET /v1/status conflicts with gsf route GET /v1/status`,
      },
      {
        register: `    api.console.registerDeployApiHandler({ getUser: (_req, res) => res.ok({}) });`,
        cause: 'GSF_ERR_PLUGIN_DUPLICATE', message: `plugin '${PLUGIN}' registers console operation 'GetUser', already registered by plugin 'console-probe'`,
      },
      {
        register: `    api.console.registerCustomQueryHandler('Mine', 'POST', 'tools/echo', [], null, (_req, res) => res.ok({}));`,
        cause: 'GSF_ERR_PLUGIN_DUPLICATE',
        message: `plugin '${PLUGIN}' registers custom query 'POST /cs-api/v1/custom-queries/tools/echo', already registered by plugin 'console-probe'`,
      },
    ];
    for (const k of cases) {
      writePlugin(dir, { version: '2.0.0', register: k.register });
      const refused = await post(s, '/v1/plugins/reload');
      t.deepEqual(refused, {
        status: 422,
        body: {
          error: 'GSF_ERR_RELOAD_FAILED',
          message: `reload of plugin '${PLUGIN}' refused, the running version keeps serving: ${k.message}`,
          plugins: [PLUGIN], stage: 'register', cause: k.cause,
        },
      });
      t.like((await get(s, `/v1/plugins/${PLUGIN}`)).body, { version: '1.0.0', reloads: 0 });
      // Version 1 still serves: its operation, its route, and the other plugin's registrations.
      t.deepEqual(await call(s, 'GET', '/cs-api/v1/character/c1'), { status: 200, body: { id: 'c1', v: 1 } });
      t.deepEqual(await call(s, 'GET', '/reloadable/kept/1'), { status: 200, body: { id: '1', v: 1 } });
      t.deepEqual(await call(s, 'POST', '/cs-api/v1/custom-queries/tools/echo', { a: 5 }), { status: 200, body: [{ a: 5 }] });
      t.is((await call(s, 'GET', '/v1/status')).status, 200);
    }
  } finally {
    await s.stop();
  }
});
