/**
 * GsfClient (Node, `ws` package) facing frames a server should not send: a JSON frame that is
 * not an object, an `_error` frame without a body, and a text frame that is not valid UTF-8.
 * The client process keeps running: the request is answered (by a reply, an error or the
 * close) and `closed` resolves.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const clientScript = path.join(root, 'test', 'fixtures', 'sdk-frames-client.ts');

interface Run { code: number | null; lines: Array<Record<string, unknown>>; stderr: string }

/** Serves one connection with `answer` for each message and runs the client process against it. */
async function runAgainst(answer: (ws: WebSocket, msg: { id?: number }) => void, limitMs: number): Promise<Run> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws) => {
    ws.on('message', (d) => answer(ws, JSON.parse(String(d)) as { id?: number }));
    ws.on('error', () => {});
  });
  const { port } = wss.address() as AddressInfo;
  const child = spawn(process.execPath, ['--import=tsx', clientScript, `ws://127.0.0.1:${port}`, String(limitMs)], {
    cwd: root, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  // The client closes after printing; bound the wait for a client that never finishes.
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  clearTimeout(killer);
  for (const c of wss.clients) c.terminate();
  await new Promise<void>((r) => wss.close(() => r()));
  const lines = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code, lines, stderr };
}

const firstLine = (s: string): string => s.split('\n').find((l) => /Error/.test(l)) ?? '';

test.serial('a frame that is JSON null is ignored; the reply after it answers the request', async (t) => {
  const r = await runAgainst((ws, msg) => {
    ws.send('null');
    ws.send(JSON.stringify({ type: 'probe', body: { ok: true }, id: msg.id }));
    ws.close(4010, 'done');
  }, 30_000);
  t.is(r.code, 0, firstLine(r.stderr));
  t.deepEqual(r.lines, [
    { request: { resolved: { ok: true } } },
    { closed: { code: 4010, reason: 'done' } },
  ]);
});

test.serial('an _error frame without a body rejects the request it answers', async (t) => {
  const r = await runAgainst((ws, msg) => {
    ws.send(JSON.stringify({ type: '_error', body: null, id: msg.id }));
    ws.close(4010, 'done');
  }, 30_000);
  t.is(r.code, 0, firstLine(r.stderr));
  t.is(r.lines.length, 2);
  t.truthy((r.lines[0]!.request as { rejected?: unknown }).rejected);
  t.deepEqual(r.lines[1], { closed: { code: 4010, reason: 'done' } });
});

test.serial('a text frame that is not valid UTF-8 ends the connection, not the client process', async (t) => {
  const r = await runAgainst((ws) => {
    // FIN + text opcode, 2 bytes of payload: 0xC3 0x28 is not UTF-8.
    (ws as unknown as { _socket: Socket })._socket.write(Buffer.from([0x81, 0x02, 0xc3, 0x28]));
  }, 30_000);
  t.is(r.code, 0, firstLine(r.stderr));
  t.is(r.lines.length, 2);
  t.deepEqual(r.lines[0], { request: { rejected: { code: 'closed', message: 'connection closed: 1006 ' } } });
  t.is((r.lines[1]!.closed as { code: number }).code, 1006);
});
