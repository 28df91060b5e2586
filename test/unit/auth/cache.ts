import test from 'ava';
import { BusyError, InFlight, Limiter, TtlCache, tokenHash } from '../../../src/auth/agent/cache.ts';

test('TtlCache expires entries, caps its size oldest-first, and stores nothing with ttl 0', (t) => {
  let now = 1000;
  const c = new TtlCache<number>(50, 2, () => now);
  c.set('a', 1);
  c.set('b', 2);
  t.is(c.get('a'), 1);
  c.set('c', 3);
  t.is(c.get('a'), undefined);
  t.is(c.get('b'), 2);
  t.is(c.size, 2);
  now += 50;
  t.is(c.get('b'), undefined);
  const off = new TtlCache<number>(0, 10);
  off.set('a', 1);
  t.is(off.get('a'), undefined);
});

test('InFlight shares one call per key while it runs', async (t) => {
  const f = new InFlight<number>();
  let calls = 0;
  let release!: (v: number) => void;
  const fn = () => { calls++; return new Promise<number>((r) => { release = r; }); };
  const a = f.run('k', fn);
  const b = f.run('k', fn);
  release(7);
  t.deepEqual(await Promise.all([a, b]), [7, 7]);
  t.is(calls, 1);
  const c = f.run('k', () => Promise.resolve(8));
  t.is(await c, 8);
});

test('Limiter runs at most max at once, queues up to maxWaiting in order, refuses the rest', async (t) => {
  const l = new Limiter(1, 1);
  const order: string[] = [];
  let release!: () => void;
  const first = l.run(() => new Promise<void>((r) => { release = r; }).then(() => { order.push('first'); }));
  const second = l.run(async () => { order.push('second'); });
  await t.throwsAsync(l.run(async () => undefined), { instanceOf: BusyError, message: 'too many platform requests waiting (1)' });
  t.is(l.inUse, 1);
  release();
  await Promise.all([first, second]);
  t.deepEqual(order, ['first', 'second']);
  t.is(l.inUse, 0);
});

test('tokenHash is a short, stable sha256 prefix', (t) => {
  t.is(tokenHash('abc'), 'ba7816bf8f01');
  t.is(tokenHash('abc').length, 12);
});
