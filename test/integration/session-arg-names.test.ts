/**
 * A bad argument of the session API names the argument: a group name is called a group name
 * (not a message type, which publish has too), and a handled message type longer than an event
 * name (256 bytes of UTF-8; its events are named after it) is refused when it is registered,
 * not when its first message comes.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, waitFor } from './_server.ts';

const PLUGIN = `
import { definePlugin } from 'gsf';
export default definePlugin({
  name: 'group-names', version: '1.0.0',
  register(api) {
    for (const type of ['n'.repeat(257), '\u00e9'.repeat(128)]) {
      try { api.sessions.onMessage(type, () => undefined); api.log.info('group-check onMessage ' + type.length + ' => ok'); } catch (e) { api.log.info('group-check onMessage ' + type.length + ' => ' + (e as { code?: string }).code + ': ' + (e as Error).message); }
    }
    api.onStart(() => {
      const tries: Array<[string, () => unknown]> = [
        ['join', () => api.sessions.join(1, '')],
        ['leave', () => api.sessions.leave(1, '')],
        ['publish', () => api.sessions.publish('\\ud800', 'chat.line', {})],
      ];
      for (const [what, f] of tries) {
        try { f(); api.log.info('group-check ' + what + ' => ok'); } catch (e) { api.log.info('group-check ' + what + ' => ' + (e as { code?: string }).code + ': ' + (e as Error).message); }
      }
    });
  },
});
`;

test('a bad group name is called a group name; a handled message type over 256 bytes is refused at registration', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-group-names-'));
  fs.mkdirSync(path.join(dir, 'group-names'));
  fs.writeFileSync(path.join(dir, 'group-names', 'index.ts'), PLUGIN);
  const s = await startTestServer({ SessionService: { websocket_port: 0 } }, [path.join(dir, 'group-names')]);
  try {
    const lines = await waitFor(() => {
      // register runs on the main thread and on the event thread; the start hook on the main thread.
      const found = s.logs().filter((l) => l.includes(' main] group-check '));
      return found.length === 5 ? found.map((l) => l.slice(l.indexOf('group-check ') + 12)) : undefined;
    }, 10000, 'the five group-check lines');
    t.deepEqual(lines, [
      'onMessage 257 => GSF_ERR_BAD_ARGUMENT: sessions.onMessage: message type must be at most 256 bytes in UTF-8 (its events are named after it)',
      'onMessage 128 => ok',
      'join => GSF_ERR_BAD_ARGUMENT: sessions.join: group name must be a non-empty string',
      'leave => GSF_ERR_BAD_ARGUMENT: sessions.leave: group name must be a non-empty string',
      'publish => GSF_ERR_BAD_ARGUMENT: sessions.publish: group name holds an unpaired UTF-16 surrogate (text with no UTF-8 form)',
    ]);
  } finally {
    await s.stop();
  }
});
