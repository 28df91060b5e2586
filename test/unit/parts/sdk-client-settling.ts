/**
 * GsfClient against an in-memory WebSocket: every promise the client hands out settles when the
 * connection ends, request time limits of any size are honoured, a reply to a request that
 * already timed out is not delivered as a server push, and a request whose body cannot be
 * encoded leaves nothing pending.
 */
import test from 'ava';
import { GsfClient, GsfRequestError, type WebSocketLike } from '../../../src/sdk/index.ts';

class MemoryWebSocket implements WebSocketLike {
  static last: MemoryWebSocket | null = null;
  binaryType = '';
  readyState = 0;
  readonly sent: string[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;

  constructor(readonly url: string) {
    MemoryWebSocket.last = this;
    setImmediate(() => { this.readyState = 1; this.onopen?.({}); });
  }

  send(data: string | Uint8Array): void {
    this.sent.push(String(data));
  }

  close(code = 1000, reason = ''): void {
    this.readyState = 3;
    setImmediate(() => this.onclose?.({ code, reason }));
  }

  /** A frame from the server. */
  push(envelope: unknown): void {
    this.onmessage?.({ data: JSON.stringify(envelope) });
  }
}

async function connect(): Promise<{ c: GsfClient; ws: MemoryWebSocket }> {
  const c = await GsfClient.connect({ url: 'ws://memory:1', version: '1.0.0', WebSocket: MemoryWebSocket });
  return { c, ws: MemoryWebSocket.last! };
}

type Outcome = { state: 'pending' } | { state: 'resolved'; value: unknown } | { state: 'rejected'; error: unknown };

/** Tracks a promise's outcome without awaiting it. */
function track(p: Promise<unknown>): { get(): Outcome } {
  let o: Outcome = { state: 'pending' };
  p.then((value) => { o = { state: 'resolved', value }; }, (error: unknown) => { o = { state: 'rejected', error }; });
  return { get: () => o };
}

/** Polls until `cond` holds or `ms` pass; returns whether it held. */
async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setImmediate(r));
  }
  return true;
}

test.serial('a next() waiting when the connection closes settles', async (t) => {
  const { c } = await connect();
  const waiting = track(c.next('welcome'));
  t.deepEqual(await c.close(4010, 'bye'), { code: 4010, reason: 'bye' });
  t.true(await until(() => waiting.get().state !== 'pending', 2000), 'next() is still pending after the connection closed');
  t.is(waiting.get().state, 'rejected');
});

test.serial('a next() called after the connection closed settles', async (t) => {
  const { c } = await connect();
  await c.close();
  const late = track(c.next('welcome'));
  t.true(await until(() => late.get().state !== 'pending', 2000), 'next() on a closed client never settles');
  t.is(late.get().state, 'rejected');
});

for (const timeoutMs of [Infinity, 2 ** 31, 3_000_000_000]) {
  test.serial(`a request with a time limit of ${timeoutMs} ms waits for its reply`, async (t) => {
    const { c, ws } = await connect();
    const r = track(c.request('slow', { n: 1 }, timeoutMs));
    const { id } = JSON.parse(ws.sent.at(-1)!) as { id: number };
    // Give a timer that fires at once the turns it needs.
    await new Promise((res) => setTimeout(res, 20));
    t.deepEqual(r.get(), { state: 'pending' });
    ws.push({ type: 'slow', body: { ok: true }, id });
    t.true(await until(() => r.get().state !== 'pending', 2000));
    t.deepEqual(r.get(), { state: 'resolved', value: { ok: true } });
    await c.close();
  });
}

test.serial('a reply that arrives after its request timed out is not delivered as a push', async (t) => {
  const { c, ws } = await connect();
  const err = await t.throwsAsync(c.request('score', {}, 5));
  t.true(err instanceof GsfRequestError);
  t.is((err as GsfRequestError).code, 'timeout');
  const { id } = JSON.parse(ws.sent.at(-1)!) as { id: number };
  const pushes: unknown[] = [];
  c.on('score', (body) => pushes.push(body));
  ws.push({ type: 'score', body: { late: true }, id });
  ws.push({ type: 'score', body: { pushed: true } });
  t.deepEqual(pushes, [{ pushed: true }]);
  await c.close();
});

test.serial('a request whose body cannot be encoded leaves no pending entry', async (t) => {
  const { c } = await connect();
  await t.throwsAsync(c.request('b', { n: 1n }, 0));
  t.is((c as unknown as { pending: Map<number, unknown> }).pending.size, 0);
  await c.close();
});
