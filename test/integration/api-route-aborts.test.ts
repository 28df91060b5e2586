/**
 * Plugin routes whose clients go away mid-request, many times. The table of requests
 * waiting for their handler's answer must empty, and nothing per request may stay behind.
 */
import net from 'node:net';
import test from 'ava';
import { handlerServices, releaseHandlerServices } from '../../src/api/main/dispatch.ts';
import { native } from '../../src/native.ts';
import { startTestServer, waitFor, type TestServer } from './_server.ts';

function pendingOf(s: TestServer): { size: number; byEvent: number } {
  const services = handlerServices(s.server.thread.runtime, s.server.dispatcher, 1000, s.server.thread.log);
  releaseHandlerServices(s.server.dispatcher);
  const p = services.pending as unknown as { size: number; byEvent: Map<number, number> };
  return { size: p.size, byEvent: p.byEvent.size };
}

function rawRequest(port: number, text: string, abortAfterMs: number): Promise<void> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1', () => {
      sock.write(text);
      setTimeout(() => { sock.destroy(); resolve(); }, abortAfterMs);
    });
    sock.on('error', () => resolve());
  });
}

test.serial('plugin-route requests aborted by their clients (before and after their handler answers) leave no pending request', async (t) => {
  const s = await startTestServer({ ApiService: { api_service_handler_timeout_in_ms: 1500 } }, ['route-aborts']);
  try {
    const port = s.server.api.port;
    const base = pendingOf(s);
    t.deepEqual(base, { size: 0, byEvent: 0 });
    const jobs: Array<Promise<void>> = [];
    for (let i = 0; i < 300; i++) {
      const kind = i % 5;
      if (kind === 0) jobs.push(rawRequest(port, `GET /leak/slow/50 HTTP/1.1\r\nHost: x\r\n\r\n`, 5));
      else if (kind === 1) jobs.push(rawRequest(port, `GET /leak/never HTTP/1.1\r\nHost: x\r\n\r\n`, 5));
      else if (kind === 2) jobs.push(rawRequest(port, `POST /leak/body HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":"${'x'.repeat(100)}`, 5));
      else if (kind === 3) jobs.push(rawRequest(port, `POST /leak/body HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{"a":123}`, 5));
      else jobs.push(rawRequest(port, `GET /leak/throws HTTP/1.1\r\nHost: x\r\n\r\n`, 1));
    }
    await Promise.all(jobs);
    // /leak/never waits for its deadline (1.5 s): poll until every request is over.
    await waitFor(() => pendingOf(s).size === 0 && native.queueStats().outstanding === 0, 10000, 'pending requests gone').catch(() => undefined);
    t.deepEqual(pendingOf(s), { size: 0, byEvent: 0 });
    t.is(native.queueStats().outstanding, 0);
    // The server still answers.
    const r = await fetch(`http://127.0.0.1:${port}/leak/item/7`);
    t.deepEqual(await r.json(), { id: '7' });
    t.deepEqual(pendingOf(s), { size: 0, byEvent: 0 });
  } finally {
    await s.stop();
  }
});
