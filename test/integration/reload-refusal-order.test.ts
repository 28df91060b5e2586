/**
 * A reload that removes the last message type any plugin handles, while a request of that type
 * still awaits on the old event thread (docs/guides/sessions.md: every message is answered in the
 * order the session sent it; a refusal is queued on the session's tag like a message). The
 * session's next request is refused (unknown type), and its error comes after the earlier
 * request's reply, with one I/O thread and with two.
 */
import test from 'ava';
import { native } from '../../src/native.ts';
import { GsfRequestError, ProtocolError } from '../../src/sdk/index.ts';
import { startSessionServer } from './_session.ts';
import { waitFor } from './_server.ts';
import { PLUGIN, newPluginDir, post, writePlugin } from './_reload.ts';

const v1 = `import { definePlugin } from 'gsf';
export default definePlugin({
  name: '${PLUGIN}',
  version: '1.0.0',
  register(api) {
    api.sessions.onMessage<{ ms: number }>('slow', async (body, msg) => {
      api.counters.increase('${PLUGIN}', 'slow_started');
      while ((api.counters.readInt('${PLUGIN}', 'release') ?? 0) === 0) await new Promise((r) => setTimeout(r, 5));
      msg.reply('slow done');
    });
  },
});
`;
const v2 = `import { definePlugin } from 'gsf';
export default definePlugin({
  name: '${PLUGIN}',
  version: '2.0.0',
  register(api) {
    api.event('${PLUGIN}.idle', () => undefined);
  },
});
`;

for (const io of [1, 2]) {
  test.serial(`io_threads_size ${io}: the refusal of a type removed by a reload comes after the reply of the session's earlier, still awaiting request`, async (t) => {
    native.counterUpdate(PLUGIN, 'release', 0, false, 'probe');
    native.counterUpdate(PLUGIN, 'slow_started', 0, false, 'probe');
    const dir = newPluginDir({ version: '1.0.0', raw: v1 });
    const s = await startSessionServer({ SessionService: { io_threads_size: io }, EventDispatcher: { event_threads_size: 1 } }, [dir]);
    const c = await s.connect('json');
    s.server.thread.flags.set('session_message_logging_level', 1);
    try {
      const order: string[] = [];
      const first = c.request('slow', {}, 10000).then((v) => { order.push(`first: ${String(v)}`); }, (e: unknown) => { order.push(`first failed: ${String(e)}`); });
      await waitFor(() => native.counterReadInt(PLUGIN, 'slow_started') === 1, 10000, 'the first request to await');
      writePlugin(dir, { version: '2.0.0', raw: v2 });
      const r = await post(s, '/v1/plugins/reload');
      t.is(r.status, 200, JSON.stringify(r.body));
      const second = c.request('slow', {}, 10000).then(
        (v) => { order.push(`second: ${String(v)}`); },
        (e: unknown) => { order.push(`second: ${e instanceof GsfRequestError ? e.code : String(e)}`); });
      // The server has read the second request (its line is written before the frame is
      // refused): an error sent at once would be on its way now, ahead of the first's reply.
      await waitFor(() => s.logs().filter((l) => /session message in: session=\d+, type=slow,/.test(l)).length === 2, 10000, 'the second request read');
      native.counterUpdate(PLUGIN, 'release', 1, false, 'probe');
      await Promise.all([first, second]);
      t.deepEqual(order, ['first: slow done', `second: ${ProtocolError.unknownType}`]);
    } finally {
      native.counterUpdate(PLUGIN, 'release', 1, false, 'probe');
      await c.close();
      await s.stop();
    }
  });
}
