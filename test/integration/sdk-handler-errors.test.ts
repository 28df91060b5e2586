/**
 * The client SDK against a real server when the game's own code misbehaves or its text is odd
 * (docs/guides/sessions.md, "The client"):
 * - a push handler that throws does not stop the client: its error is thrown again on its own,
 *   and the reply behind the push, later pushes and the handler's next kept pushes arrive
 *   (run in a child process that, like a page, goes on after an uncaught error);
 * - a handler removed before it ran its kept pushes leaves them kept, also when another handler
 *   of the type is left;
 * - msgpack text with an unpaired surrogate arrives with one U+FFFD in its place, not three.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSessionServer, type SessionServer } from './_session.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const clientScript = path.join(root, 'test', 'fixtures', 'sdk-throwing-handler-client.ts');

let s: SessionServer;

test.before(async () => {
  s = await startSessionServer();
});

test.after.always(async () => {
  await s?.stop();
});

/** Runs the client of sdk-throwing-handler-client.ts and returns what it printed. */
async function runClient(mode: 'kept' | 'live'): Promise<unknown> {
  const child = spawn(process.execPath, ['--import=tsx', clientScript, s.url, mode], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  await new Promise((r) => child.on('close', r));
  const line = out.split('\n').find((l) => l.startsWith('{'));
  if (line === undefined) throw new Error(`the client printed no result: ${err}`);
  return JSON.parse(line);
}

test.serial('a push handler that throws on a live push: the reply behind it and later pushes arrive', async (t) => {
  t.deepEqual(await runClient('live'), { got: [1, 2], thrown: ['handler failed on 1'], requests: ['replied', 'replied'] });
});

test.serial('a handler that throws on its first kept push still gets the next kept push and later pushes', async (t) => {
  t.deepEqual(await runClient('kept'), { got: [1, 2, 3], thrown: ['handler failed on 1'], requests: ['replied', 'replied', 'replied'] });
});

test.serial('a kept push of a handler removed before it ran stays kept while another handler of its type is left', async (t) => {
  const c = await s.connect();
  try {
    const { sessionId } = await c.request<{ sessionId: number }>('whoami');
    await c.request('push', { to: sessionId, body: 1 }); // the push comes before the reply: it is kept
    const a: unknown[] = [];
    const b: unknown[] = [];
    const offA = c.on('pushed', (body) => a.push(body));
    c.on('pushed', (body) => b.push(body));
    offA(); // before A ran its kept push
    await Promise.resolve();
    t.is((await c.next<number>('pushed')).body, 1);
    await c.request('push', { to: sessionId, body: 2 });
    t.deepEqual([a, b], [[], [2]]);
  } finally {
    await c.close();
  }
});

test.serial('msgpack: text with an unpaired surrogate arrives with one U+FFFD in its place, in bodies, keys and types', async (t) => {
  const cut = 'gg 🎮'.slice(0, -1); // a chat line cut in the middle of an emoji: 'gg \uD83C'
  const json = await s.connect('json');
  const msgpack = await s.connect('msgpack');
  try {
    // JSON carries the surrogate as an escape; the server echoes it as it came.
    t.is(await json.request<string>('echo', cut), cut);
    t.is(await msgpack.request<string>('echo', cut), 'gg \uFFFD');
    t.deepEqual(await msgpack.request('echo', { [cut]: [cut, '🎮ok'] }), { 'gg \uFFFD': ['gg \uFFFD', '🎮ok'] });
    // An unknown type comes back in the error frame as the server read it.
    const err = await msgpack.request('nope\uDC00').then(() => null, (e: { code: string; type?: string }) => [e.code, e.type]);
    t.deepEqual(err, ['GSF_ERR_MESSAGE_UNKNOWN_TYPE', 'nope\uFFFD']);
  } finally {
    await json.close();
    await msgpack.close();
  }
});
