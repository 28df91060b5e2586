/**
 * What lives outside the plugin's code survives its reload: a session's groups, the accounts
 * logged in, and the objects stored, all read and used by the new version (whose declarations
 * file was only reformatted, which is no change of the declarations).
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { startSessionServer } from './_session.ts';
import { waitFor } from './_server.ts';
import { PLUGIN, newPluginDir, post, writePlugin } from './_reload.ts';

/** Handlers for groups, accounts and objects; every reply names the version that answered. */
const handlers = (version: string): string => `
    api.sessions.onMessage('whoami', (_b, msg) => msg.reply(msg.sessionId));
    api.sessions.onMessage<{ account: string }>('login', async (b, msg, ctx) => msg.reply(await ctx.io(api.accounts.login(b.account))));
    api.sessions.onMessage<{ account: string }>('locate', async (b, msg) => {
      msg.reply({ session: await api.accounts.locate(b.account), loggedIn: await api.accounts.isLoggedIn(b.account), v: '${version}' });
    });
    api.sessions.onMessage<{ group: string }>('join', (b, msg) => { api.sessions.join(msg.sessionId, b.group); msg.reply(true); });
    api.sessions.onMessage<{ group: string; body: unknown }>('publish', (b, msg) => {
      api.sessions.publish(b.group, 'room.news', { body: b.body, v: '${version}' });
      msg.reply(true);
    });
    api.sessions.onMessage<{ name: string; text: string }>('save', (b, msg) => msg.reply(api.objects.create('ReloadNote', { name: b.name, text: b.text }).id));
    api.sessions.onMessage<{ name: string }>('read', async (b, msg) => {
      const note = await api.objects.fetchBy('ReloadNote', 'name', b.name);
      msg.reply(note ? { id: note.id, text: note.get('text'), v: '${version}' } : null);
    });`;

test('groups joined, accounts logged in and objects stored before a reload are there after it', async (t) => {
  const dir = newPluginDir({ version: '1.0.0', register: handlers('1.0.0') });
  fs.mkdirSync(path.join(dir, 'objects'));
  const declarations = { ReloadNote: { fields: { name: 'string', text: 'string' }, unique: ['name'] } };
  fs.writeFileSync(path.join(dir, 'objects', 'notes.json'), JSON.stringify(declarations));
  const s = await startSessionServer({ ObjectStore: {} }, [dir]);
  const member = await s.connect('json');
  const other = await s.connect('msgpack');
  const news: unknown[] = [];
  const otherNews: unknown[] = [];
  member.on('room.news', (body) => news.push(body));
  other.on('room.news', (body) => otherNews.push(body));
  try {
    const memberId = await member.request<number>('whoami');
    t.true(await member.request('join', { group: 'room' }));
    t.deepEqual(await member.request('login', { account: 'ada' }), { ok: true, replaced: null });
    const id = await member.request<string>('save', { name: 'first', text: 'written by 1.0.0' });
    t.is(typeof id, 'string');
    t.deepEqual(await other.request('read', { name: 'first' }), { id, text: 'written by 1.0.0', v: '1.0.0' });

    writePlugin(dir, { version: '2.0.0', register: handlers('2.0.0') });
    // An editor saves the declarations reformatted: what they declare is the same, so the reload goes on.
    fs.writeFileSync(path.join(dir, 'objects', 'notes.json'), `${JSON.stringify(declarations, null, 2)}\n`);
    const reloaded = await post(s, '/v1/plugins/reload');
    t.is(reloaded.status, 200, JSON.stringify(reloaded.body));
    t.like(reloaded.body, { reloaded: [{ name: PLUGIN, version: '2.0.0' }] });

    // The group: a publish from the new version reaches the member, and only it.
    t.true(await other.request('publish', { group: 'room', body: 'after the reload' }));
    await waitFor(() => news.length === 1, 10000, 'the publish to reach the member');
    t.deepEqual(news, [{ body: 'after the reload', v: '2.0.0' }]);
    // The account: still logged in on the same session.
    t.deepEqual(await other.request('locate', { account: 'ada' }), { session: memberId, loggedIn: true, v: '2.0.0' });
    // The object: read back by the new version.
    t.deepEqual(await other.request('read', { name: 'first' }), { id, text: 'written by 1.0.0', v: '2.0.0' });
    // The other session never joined the group: neither publish reached it.
    t.true(await member.request('publish', { group: 'room', body: 'again' }));
    await waitFor(() => news.length === 2, 10000, 'the second publish');
    t.deepEqual(otherNews, []);
  } finally {
    await member.close();
    await other.close();
    await s.stop();
  }
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
});
