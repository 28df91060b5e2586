/**
 * plugins/native-echo (C) and its managed twin (test/fixtures/plugins/managed-echo) serve the
 * same messages under `native.*` and `managed.*`: every case must get the same answer from
 * both, on both codecs.
 */
import path from 'node:path';
import test from 'ava';
import { GsfRequestError, type GsfClient } from '../../src/sdk/index.ts';
import { native } from '../../src/native.ts';
import { fixtures } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer;
const clients: Record<'json' | 'msgpack', GsfClient | null> = { json: null, msgpack: null };

test.before(async () => {
  s = await startSessionServer({}, [path.join(fixtures, '..', '..', 'plugins', 'native-echo'), 'managed-echo']);
  clients.json = await s.connect('json');
  clients.msgpack = await s.connect('msgpack');
});
test.after.always(async () => {
  await clients.json?.close();
  await clients.msgpack?.close();
  await s?.stop();
});

/** The answer to a request: its body, or the error frame's code and message with the twin's prefix removed. */
async function answer(c: GsfClient, kind: 'native' | 'managed', op: string, body: unknown): Promise<unknown> {
  try {
    return { ok: await c.request(`${kind}.${op}`, body) };
  } catch (err) {
    if (!(err instanceof GsfRequestError)) throw err;
    return { error: err.code, message: err.message.replace(`${kind}.`, '<twin>.'), type: err.type?.replace(`${kind}.`, '<twin>.') };
  }
}

const echoBodies: unknown[] = [
  undefined, null, true, 0, -0, 1.5, -2147483649, 4294967296, 2 ** 53 - 1, 1e21, 1e-7, '', 'héllo 😀 "quoted" \\ \n',
  [], {}, [1, [2, [3, [4]]]], { b: 1, a: 2, 10: 'ten', 9: 'nine', '01': 'not an index' },
  { deep: { deeper: { deepest: [{}, [], '']} } }, Array.from({ length: 40 }, (_, i) => i * 1.25),
  Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i % 2 ? 'odd' : i])),
];

const addBodies: unknown[] = [
  { a: 1, b: 2 }, { a: 0.1, b: 0.2 }, { a: -5, b: 5.5, c: 'ignored' }, { a: 1e308, b: 1e308 },
  { a: 1 }, { a: '1', b: 2 }, { a: true, b: 1 }, [1, 2], null, undefined, 'text',
];

for (const codec of ['json', 'msgpack'] as const) {
  test.serial(`echo: the same answers from the native plugin and its managed twin (${codec})`, async (t) => {
    const c = clients[codec]!;
    for (const body of echoBodies) {
      const [n, m] = [await answer(c, 'native', 'echo', body), await answer(c, 'managed', 'echo', body)];
      t.deepEqual(n, m, `echo of ${JSON.stringify(body)}`);
    }
  });

  test.serial(`add: the same sums and the same failures from both (${codec})`, async (t) => {
    const c = clients[codec]!;
    for (const body of addBodies) {
      t.deepEqual(await answer(c, 'native', 'add', body), await answer(c, 'managed', 'add', body), `add of ${JSON.stringify(body)}`);
    }
  });

  test.serial(`counter, child event and timer push: the same from both (${codec})`, async (t) => {
    const c = clients[codec]!;
    const counts = [native.counterValue('native_example', 'echoes') ?? 0, native.counterValue('managed_example', 'echoes') ?? 0];
    const ticks = [c.next('native.tick'), c.next('managed.tick')];
    await answer(c, 'native', 'echo', 'x');
    await answer(c, 'managed', 'echo', 'x');
    t.deepEqual([(await ticks[0]!).body, (await ticks[1]!).body], [{ tag: 1 }, { tag: 1 }]);
    t.deepEqual([native.counterValue('native_example', 'echoes'), native.counterValue('managed_example', 'echoes')],
      [counts[0]! + 1, counts[1]! + 1]);
  });
}
