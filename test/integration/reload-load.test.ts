/**
 * A reload under load: 100 sessions keep pinging, at least 20,000 messages, with thousands in
 * flight when the reload starts. Every message is answered exactly once and in its session's
 * order, every session switches from the old version to the new one once and for good, and
 * every message sent after the reload answered is answered by the new version.
 */
import test from 'ava';
import { GsfClient } from '../../src/sdk/index.ts';
import { native } from '../../src/native.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { startSessionServer } from './_session.ts';
import { newPluginDir, post, writePlugin, type Pong } from './_reload.ts';

const SESSIONS = 100;
const PER_SESSION = 200;
/** Requests each session keeps in flight. */
const WINDOW = 40;

interface Reply extends Pong {
  /** Sent after the reload had answered. */
  sentAfter: boolean;
}

test('20,000 messages over 100 sessions during a reload: none lost, none twice, every session in order', async (t) => {
  const dir = newPluginDir({ version: '1.0.0' });
  const s = await startSessionServer({ EventDispatcher: { event_threads_size: 2 } }, [dir]);
  const clients = await Promise.all(Array.from({ length: SESSIONS }, (_v, i) =>
    GsfClient.connect({ url: s.url, version: '1.0.0', codec: i % 2 === 0 ? 'json' : 'msgpack', requestTimeoutMs: 120_000 })));
  const state = { done: false, inflight: 0 };
  const drive = async (c: GsfClient): Promise<{ sent: number; replies: Reply[] }> => {
    const replies: Reply[] = [];
    const inflight = new Set<Promise<void>>();
    let sent = 0;
    let sentAfterReload = 0;
    // Until PER_SESSION are sent and the reload has answered, and then a window more: however
    // long the reload takes on a busy machine, every session sends to the new version too.
    const more = (): boolean => !(state.done && sent >= PER_SESSION && sentAfterReload >= WINDOW);
    while (more()) {
      while (inflight.size < WINDOW && more()) {
        const n = ++sent;
        const sentAfter = state.done;
        if (sentAfter) sentAfterReload++;
        const p: Promise<void> = (c.request('ping', { n }) as Promise<Pong>).then((r) => {
          replies[n - 1] = { ...r, sentAfter };
          inflight.delete(p);
          state.inflight--;
        });
        inflight.add(p);
        state.inflight++;
      }
      await Promise.race(inflight);
    }
    await Promise.all(inflight);
    return { sent, replies };
  };
  try {
    const driving = clients.map(drive);
    // Every session has its window out before the reload starts.
    await new Promise((r) => setImmediate(r));
    const inflightAtStart = state.inflight;
    writePlugin(dir, { version: '2.0.0' }, 'label-2');
    const reloaded = await post(s, '/v1/plugins/reload');
    state.done = true;
    const results = await Promise.all(driving);
    t.is(reloaded.status, 200, JSON.stringify(reloaded.body));
    t.true(inflightAtStart >= SESSIONS * WINDOW / 2, `${inflightAtStart} in flight when the reload started`);
    let total = 0;
    const versions = new Set<string>();
    let mixed = 0;
    for (const { sent, replies } of results) {
      total += sent;
      t.is(replies.filter(Boolean).length, sent, 'every message answered');
      // n in send order, and seq (counted on the server as the pings ran) equal to it: each ran once, in order.
      t.true(replies.every((r, i) => r.n === i + 1 && r.seq === i + 1), 'order and exactly once');
      const switchAt = replies.findIndex((r) => r.version === '2.0.0');
      t.true(switchAt >= 0, 'the session reached the new version');
      if (switchAt > 0) mixed++;
      t.true(replies.slice(0, switchAt).every((r) => r.version === '1.0.0' && r.label === 'label-1'));
      t.true(replies.slice(switchAt).every((r) => r.version === '2.0.0' && r.label === 'label-2'), 'never back to the old version');
      t.true(replies.filter((r) => r.sentAfter).every((r) => r.version === '2.0.0'));
      for (const r of replies) versions.add(r.version);
    }
    t.true(total >= SESSIONS * PER_SESSION, `${total} messages`);
    t.true(mixed > 0, 'some sessions switched in the middle of their stream');
    t.log(`${total} messages, ${inflightAtStart} in flight when the reload started, ${mixed} sessions switched mid-stream, `
      + `reload ${String(reloaded.body.duration_ms)} ms`);
    t.deepEqual([...versions].sort(), ['1.0.0', '2.0.0']);
    const stats = activeSessions!.listener.stats;
    t.is(stats.protocolErrors, 0);
    t.is(stats.droppedNoSession + stats.droppedBackpressure, 0);
    t.is(native.counterValue('engine', 'events_unknown'), 0);
    t.is(native.counterValue('engine', 'events_failed'), 0);
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await s.stop();
  }
});
