/**
 * A native plugin's message type is the name of every event it handles, so it is at most 256
 * bytes of UTF-8 (an event name's limit): register_message refuses a longer one with
 * GSF_STATUS_INVALID_ARGUMENT at init. A client message of that type is then an unknown type,
 * answered with its id, where it used to fail inside gsf with no frame for the client.
 */
import path from 'node:path';
import test from 'ava';
import WebSocket from 'ws';
import { fixtures, waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

interface Frame { type: string; id?: number; body?: { code?: string } & Record<string, unknown> }

let s: SessionServer;

test.before(async () => {
  s = await startSessionServer({}, [path.join(fixtures, 'native-plugins', 'native-long-type')]);
});
test.after.always(async () => {
  await s?.stop();
});

test.serial('a 257-byte message type is refused at registration; its messages are unknown types, answered with their id', async (t) => {
  const registered = s.logs().filter((l) => l.includes('native-long-type: register_message')).map((l) => l.slice(l.indexOf('native-long-type:')));
  t.deepEqual(registered, [
    'native-long-type: register_message of 257 bytes: status 1',
    'native-long-type: register_message of 256 bytes: status 0',
  ]);
  const ws = new WebSocket(`${s.url}/?version=1.0.0&codec=json`);
  const frames: Frame[] = [];
  ws.on('message', (data: Buffer) => { frames.push(JSON.parse(data.toString('utf8')) as Frame); });
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  try {
    ws.send(JSON.stringify({ type: 'n'.repeat(257), id: 1, body: {} }));
    ws.send(JSON.stringify({ type: 'n'.repeat(256), id: 2, body: {} }));
    await waitFor(() => frames.length === 2, 10000, 'both answers');
    t.like(frames[0], { type: '_error', id: 1, body: { code: 'GSF_ERR_MESSAGE_UNKNOWN_TYPE' } });
    t.like(frames[1], { type: 'n'.repeat(256), id: 2, body: { ok: true } });
    t.false(s.logs().some((l) => l.includes("plugin 'gsf' event '_session.message' failed")));
  } finally {
    ws.close();
  }
});
