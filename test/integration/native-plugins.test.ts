import path from 'node:path';
import test from 'ava';
import { GsfRequestError, ProtocolError, type GsfClient } from '../../src/sdk/index.ts';
import { native } from '../../src/native.ts';
import { namedTag } from '../../src/events/tags.ts';
import { DecodeError, decodeFrame } from '../../src/session/codec.ts';
import { fixtures, waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

/** The example plugins of the repository (built by npm install). */
export const examplePlugin = (name: string): string => path.join(fixtures, '..', '..', 'plugins', name);

let s: SessionServer;

test.before(async () => {
  s = await startSessionServer({ EventDispatcher: { event_threads_size: 2 } },
    [examplePlugin('native-echo'), examplePlugin('native-greeter'), 'session-probe']);
});
test.after.always(async () => {
  await s?.stop();
});

async function failure(request: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await request;
  } catch (err) {
    if (err instanceof GsfRequestError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the request succeeded');
}

async function errorFrame(c: GsfClient, frame: string | Uint8Array): Promise<unknown> {
  const next = c.next('_error');
  c.sendRaw(frame);
  return (await next).body;
}

test.serial('native.echo answers both codecs, counts each echo, and its child event\'s timer pushes native.tick', async (t) => {
  const [json, mp] = await Promise.all([s.connect('json'), s.connect('msgpack')]);
  try {
    const before = native.counterValue('native_example', 'echoes') ?? 0;
    const body = { text: 'héllo 😀', list: [1, 2.5, null, -3], '10': 'index keys first', nested: { a: {} } };
    const ticks = [json.next<{ tag: number }>('native.tick'), mp.next<{ tag: number }>('native.tick')];
    t.deepEqual(await json.request('native.echo', body), body);
    t.deepEqual(await mp.request('native.echo', body), body);
    t.is(await json.request('native.echo'), undefined, 'no body in, no body out');
    t.is(await mp.request('native.echo', null), null);
    t.is(native.counterValue('native_example', 'echoes'), before + 4);
    // native.echo invokes native_example.echoed (same tag), which starts a 10 ms timer.
    t.deepEqual((await ticks[0]!).body, { tag: 1 }, 'the timer event runs on the timer tag');
    t.deepEqual((await ticks[1]!).body, { tag: 1 });
  } finally {
    await Promise.all([json.close(), mp.close()]);
  }
});

test.serial('native.add sums; a body without two numbers fails that request only', async (t) => {
  const [a, b] = await Promise.all([s.connect('json'), s.connect('msgpack')]);
  try {
    t.deepEqual(await a.request('native.add', { a: 2, b: 0.5 }), { sum: 2.5 });
    t.deepEqual(await b.request('native.add', { a: -1, b: 1e300 }), { sum: 1e300 });
    const [bad, other] = await Promise.all([failure(a.request('native.add', { a: 2 })), b.request('native.add', { a: 1, b: 1 })]);
    t.is(bad.code, ProtocolError.handlerFailed);
    t.is(bad.message, "the handler of 'native.add' failed");
    t.deepEqual(other, { sum: 2 }, 'another session\'s request in flight is answered');
    t.deepEqual(await a.request('native.echo', 'still here'), 'still here', 'the failing session keeps working');
    const line = await waitFor(() => s.logs().find((l) => l.includes("message handler 'native.add' failed")));
    t.regex(line, /GSF_ERR_HANDLER_FAILED/);
    t.true(line.includes("plugin 'native-echo' message handler 'native.add' failed: INVALID_ARGUMENT: native.add needs a body {a: number, b: number}"), line);
    // Named once, as the plugin's own failure: not gsf's message event, and no JavaScript stack of gsf's internals.
    t.false(line.includes("plugin 'gsf'"), line);
    t.false(line.includes('_session.message'), line);
    t.false(/\bat .*\.ts:\d+/.test(line) || line.includes('"stack"') || line.includes('stack='), line);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test.serial('native-greeter (C++): replies, an exception fails the request, events on a named tag', async (t) => {
  const c = await s.connect('msgpack');
  try {
    t.deepEqual(await c.request('native.greet', { name: 'Ada' }), { greeting: 'Hello, Ada!', client_version: '1.0.0' });
    const bad = await failure(c.request('native.greet', {}));
    t.is(bad.code, ProtocolError.handlerFailed);
    const boom = await failure(c.request('native.boom'));
    t.is(boom.code, ProtocolError.handlerFailed);
    t.is(boom.message, "the handler of 'native.boom' failed");
    t.truthy(await waitFor(() => s.logs().find((l) => l.includes("message handler 'native.boom' failed: INTERNAL: boom"))));
    const visits = native.counterValue('native_example', 'visits') ?? 0;
    t.deepEqual(await c.request('native.visit', { room: 'lobby' }), { room: 'lobby', tag: namedTag('room:lobby') });
    await waitFor(() => native.counterValue('native_example', 'visits') === visits + 1, 10000, 'the visit event');
    t.pass();
  } finally {
    await c.close();
  }
});

test.serial('a bad frame for a native type gets the error frame a managed type gets', async (t) => {
  const [json, mp] = await Promise.all([s.connect('json'), s.connect('msgpack')]);
  const { Packr } = await import('msgpackr');
  const packr = new Packr({ useRecords: false });
  try {
    // What the managed path answers is what decodeFrame throws for the same bytes.
    const bad = '{"type":"native.echo","body":{';
    const expected = t.throws(() => decodeFrame(Buffer.from(bad), 'json'), { instanceOf: DecodeError })!;
    t.deepEqual(await errorFrame(json, bad), { code: ProtocolError.badJson, message: expected.message });
    const nativeMp = await errorFrame(mp, packr.pack({ type: 'native.echo', body: 1, extra: true }));
    const managedMp = await errorFrame(mp, packr.pack({ type: 'echo', body: 1, extra: true }));
    t.deepEqual(nativeMp, { ...(managedMp as object), type: 'native.echo' });
    t.is((nativeMp as { code: string }).code, ProtocolError.malformed);
    t.deepEqual(await json.request('native.echo', [1]), [1]);
  } finally {
    await Promise.all([json.close(), mp.close()]);
  }
});

test.serial('native events are named and profiled like managed ones', async (t) => {
  const c = await s.connect('json');
  try {
    await c.request('native.echo', 1);
    await waitFor(() => native.profilerEvent('native.echo_#1') !== null, 10000, 'the child event\'s profile');
    t.true(native.profilerEvent('native.echo')!.all_time.execution_count >= 1);
    t.true(native.profilerEvent('native.echo_#1')!.all_time.execution_count >= 1);
  } finally {
    await c.close();
  }
});
