/**
 * What `api.sessions` and `api.accounts` refuse: names with no UTF-8 form (group names, message
 * types and account ids are sent and keyed as UTF-8, where two such names would become one), and
 * bodies that cannot be encoded; each with GSF_ERR_BAD_ARGUMENT, and the event goes on.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { GsfClient } from '../../src/sdk/index.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

const srcIndex = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'index.ts');

/** A plugin that runs a list of session/account operations and answers each result or error. */
function writePlugin(dir: string, notes: string, extra = ''): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'index.ts'), `import fs from 'node:fs';
import { definePlugin } from ${JSON.stringify(srcIndex)};
const NOTES = ${JSON.stringify(notes)};
export default definePlugin({
  name: 'gprobe', version: '0.0.1',
  register(api) {
    const note = (r: unknown) => fs.appendFileSync(NOTES, JSON.stringify(r) + '\\n');
    api.sessions.onOpen(async (info) => {
      note({ what: 'opened', sessionId: info.sessionId });
      ${extra}
    });
    api.sessions.onClose(async (info) => {
      let relogin: unknown = null;
      try { relogin = await api.accounts.login('closed-' + info.sessionId, info.sessionId); } catch (e) { relogin = { err: (e as any).code ?? String(e) }; }
      note({ what: 'closed', ...info, relogin });
    });
    api.sessions.onMessage<{ ops: unknown[][] }>('do', async (body, msg) => {
      const out: unknown[] = [];
      const sid = (v: unknown) => (v === 'self' ? msg.sessionId : v);
      for (const [op, ...a] of body.ops) {
        try {
          let r: unknown = true;
          switch (op) {
            case 'join': api.sessions.join(sid(a[0]) as number, a[1] as string); break;
            case 'joinMany': for (const g of a[1] as string[]) api.sessions.join(sid(a[0]) as number, g); break;
            case 'joinRepeat': for (let i = 0; i < (a[2] as number); i++) api.sessions.join(sid(a[0]) as number, (a[1] as string) + i); break;
            case 'leave': api.sessions.leave(sid(a[0]) as number, a[1] as string); break;
            case 'publish': api.sessions.publish(a[0] as string, a[1] as string, a[2]); break;
            case 'publishBig': api.sessions.publish(a[0] as string, a[1] as string, 'x'.repeat(a[2] as number)); break;
            case 'publishGroupRepeat': api.sessions.publish((a[0] as string).repeat(a[3] as number), a[1] as string, a[2]); break;
            case 'joinGroupRepeat': api.sessions.join(sid(a[0]) as number, (a[1] as string).repeat(a[2] as number)); break;
            case 'send': api.sessions.send(sid(a[0]) as number, a[1] as string, a[2]); break;
            case 'close': api.sessions.close(sid(a[0]) as number, a[1] as string); break;
            case 'login': r = await api.accounts.login(a[0] as string, a.length > 1 ? sid(a[1]) as number : undefined); break;
            case 'loginRepeat': r = await api.accounts.login((a[0] as string).repeat(a[1] as number)); break;
            case 'logout': r = await api.accounts.logout(a[0] as string); break;
            case 'locate': r = await api.accounts.locate(a[0] as string); break;
            case 'isLoggedIn': r = await api.accounts.isLoggedIn(a[0] as string); break;
            case 'accountOf': r = await api.accounts.accountOf(sid(a[0]) as number); break;
            case 'self': r = msg.sessionId; break;
            case 'replyWeird': { const o: any = { n: 1 }; o.self = o; msg.reply(o); break; }
            case 'replyType': msg.reply(1, a[0] as string); break;
            case 'publishWeird': { const o: any = { n: 1 }; if (a[1] === 'cycle') o.self = o; if (a[1] === 'bigint') o.b = 10n; api.sessions.publish(a[0] as string, 'weird', o); break; }
            default: throw new Error('unknown op ' + String(op));
          }
          out.push({ ok: r === undefined ? null : r });
        } catch (e) {
          out.push({ err: (e as { code?: string }).code ?? 'plain:' + String(e) });
        }
      }
      msg.reply(out);
    });
  },
});
`);
  return dir;
}

let s: SessionServer | undefined;
let notesFile = '';
const clients: GsfClient[] = [];

async function start(components: Record<string, Record<string, unknown>> = {}, extra = ''): Promise<SessionServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gprobe-'));
  notesFile = path.join(dir, 'notes.jsonl');
  const plugin = writePlugin(path.join(dir, 'gprobe'), notesFile, extra);
  s = await startSessionServer(components, [plugin]);
  return s;
}

async function client(codec: 'json' | 'msgpack' = 'json'): Promise<{ c: GsfClient; id: number }> {
  const c = await s!.connect(codec);
  clients.push(c);
  const [r] = await c.request<Array<{ ok: number }>>('do', { ops: [['self']] });
  return { c, id: r!.ok };
}

const run = <T = unknown>(c: GsfClient, ...ops: unknown[][]): Promise<T[]> => c.request<T[]>('do', { ops });

test.afterEach.always(async () => {
  for (const c of clients.splice(0)) if (c.open) await c.close().catch(() => undefined);
  await s?.stop();
  s = undefined;
});

test.serial('group names, message types and account ids with unpaired surrogates are refused; others work', async (t) => {
  await start();
  const a = await client('json');
  const c = await client('msgpack');
  // JSON clients can send any UTF-16 code unit ("\ud800"), so a room name typed by a player may hold one.
  t.deepEqual(await run(a.c, ['join', 'self', '\uD800'], ['join', 'self', 'x\uDC00'], ['publish', '\uD800', 'lone', 1],
    ['send', 'self', 't\uD800', 1], ['login', 'p\uDC00'], ['locate', '\uD800'], ['replyType', '\uD800']),
  Array(7).fill({ err: 'GSF_ERR_BAD_ARGUMENT' }));
  t.deepEqual(activeSessions!.listener.groupNames(), []);
  await run(a.c, ['join', 'self', 'ルーム🎮']);
  await run(c.c, ['join', 'self', 'ルーム🎮']);
  t.is(activeSessions!.listener.groupSize('ルーム🎮'), 2);
  const na = a.c.next('room');
  const nc = c.c.next('room');
  t.deepEqual(await run(a.c, ['publish', 'ルーム🎮', 'room', '🎮'], ['login', 'プレイヤー🎮']), [{ ok: true }, { ok: { ok: true, replaced: null } }]);
  t.is((await na).body, '🎮');
  t.is((await nc).body, '🎮');
});

test.serial('a body that cannot be encoded is refused by publish and reply; the next one goes out', async (t) => {
  await start();
  const a = await client('json');
  const b = await client('msgpack');
  await run(a.c, ['join', 'self', 'w']);
  await run(b.c, ['join', 'self', 'w']);
  const r = await run(a.c, ['publishWeird', 'w', 'cycle'], ['publishWeird', 'w', 'bigint'], ['replyWeird'], ['publish', 'w', 'ok', 1]);
  t.is((await b.c.next('ok')).body, 1);
  t.deepEqual(r, [{ err: 'GSF_ERR_BAD_ARGUMENT' }, { err: 'GSF_ERR_BAD_ARGUMENT' }, { err: 'GSF_ERR_BAD_ARGUMENT' }, { ok: true }]);
});
