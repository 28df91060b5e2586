/**
 * Values nested deep: client messages in either codec (JSON is decoded at any depth; msgpack,
 * decoded recursively, is answered with an error frame carrying the request's id), and invoke
 * payloads, from an event thread and from the main thread (GSF_ERR_BAD_ARGUMENT, not a bare
 * RangeError). Fixture: test/fixtures/plugins/probe-limits-main.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { pack, unpack } from 'msgpackr';
import { startSessionServer } from './_session.ts';
import { fixtures, startTestServer, waitFor } from './_server.ts';

const PLUGIN = path.join(fixtures, 'plugins', 'probe-limits-main');

interface Conn { ws: WebSocket; frames: unknown[] }
async function open(url: string, codec: 'json' | 'msgpack'): Promise<Conn> {
  const ws = new WebSocket(`${url}/?version=1.0.0&codec=${codec}`, { maxPayload: 64 * 1024 * 1024 });
  const frames: unknown[] = [];
  ws.on('message', (data, isBinary) => frames.push(isBinary ? unpack(data as Buffer) : JSON.parse(String(data))));
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  return { ws, frames };
}
const frameWithId = (c: Conn, id: number) => waitFor(() => c.frames.find((f) => (f as { id?: number }).id === id), 10000, `the frame with id ${id}`);

/** A canonical msgpack frame (as the SDK writes it) whose body is `depth` arrays, each holding the next. */
function deepMsgpack(type: string, depth: number, id: number): Buffer {
  const head = Buffer.from(pack({ type, body: 0, id }));
  const at = head.indexOf(Buffer.from([0xa4, 0x62, 0x6f, 0x64, 0x79])) + 5; // after a4 "body"
  return Buffer.concat([head.subarray(0, at), Buffer.alloc(depth - 1, 0x91), Buffer.from([0x90]), head.subarray(at + 1)]);
}

test.serial('a msgpack message nested deeper than its decoder can go is answered by its id; the json one is served', async (t) => {
  const s = await startSessionServer({ SessionService: { max_message_bytes: 1024 * 1024 } }, [PLUGIN]);
  try {
    const j = await open(s.url, 'json');
    const m = await open(s.url, 'msgpack');
    // 200 KB of JSON: decoded and handled (the handler answers how deep the body was).
    j.ws.send(`{"type":"measure","body":${'['.repeat(100000)}${']'.repeat(100000)},"id":1}`);
    t.deepEqual(await frameWithId(j, 1), { type: 'measure', body: { depth: 99999, length: 1 }, id: 1 });
    // The same body in 100 KB of msgpack, in the SDK's canonical form (the id ends the frame):
    // msgpack decodes recursively, so the request gets an error frame with its id at once.
    m.ws.send(deepMsgpack('measure', 100000, 2));
    t.deepEqual(await frameWithId(m, 2), {
      type: '_error', id: 2,
      body: { code: 'GSF_ERR_MESSAGE_MALFORMED', message: 'a message must not nest deeper than msgpack decoding can go (thousands of levels)' },
    });
    // The session goes on; a body a hundred levels deep is served in msgpack too.
    m.ws.send(deepMsgpack('measure', 100, 3));
    t.deepEqual(await frameWithId(m, 3), { type: 'measure', body: { depth: 99, length: 1 }, id: 3 });
    j.ws.terminate();
    m.ws.terminate();
  } finally {
    await s.stop();
  }
});

test.serial('api.invoke from an event with a payload nested 10000 levels deep throws GSF_ERR_BAD_ARGUMENT, not a bare RangeError', async (t) => {
  const s = await startSessionServer({}, [PLUGIN]);
  try {
    const j = await open(s.url, 'json');
    j.ws.send(JSON.stringify({ type: 'invoke', body: { kind: 'deep', n: 10000, label: 'deep' }, id: 1 }));
    const r = await frameWithId(j, 1) as { body: { error?: { name: string; code?: string; message: string } } };
    t.deepEqual([r.body.error?.name, r.body.error?.code], ['GsfError', 'GSF_ERR_BAD_ARGUMENT']);
    t.is(r.body.error?.message, 'the payload cannot be encoded: it nests too deep or refers to itself (Maximum call stack size exceeded)');
    j.ws.terminate();
  } finally {
    await s.stop();
  }
});

test.serial('api.invoke on the main thread with a payload nested 10000 levels deep throws GSF_ERR_BAD_ARGUMENT, not a bare RangeError', async (t) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-probe-limits-')), 'limits.jsonl');
  process.env.PROBE_LIMITS_START = JSON.stringify({ kind: 'deep', n: 10000 });
  process.env.PROBE_LIMITS_FILE = file;
  let s;
  try {
    s = await startTestServer({}, [PLUGIN]);
    const line = await waitFor(() => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n')[0] : ''), 10000, 'the onStart note');
    const note = JSON.parse(line) as { error?: { name: string; code?: string; message: string } };
    t.deepEqual([note.error?.name, note.error?.code], ['GsfError', 'GSF_ERR_BAD_ARGUMENT']);
    t.is(note.error?.message, 'the payload cannot be encoded: it nests too deep or refers to itself (Maximum call stack size exceeded)');
  } finally {
    delete process.env.PROBE_LIMITS_START;
    delete process.env.PROBE_LIMITS_FILE;
    await s?.stop();
  }
});
