import test from 'ava';
import { applyIoBatch, IoBatchWriter, type IoBatchTarget } from '../../../src/session/io/io-batch.ts';
import { ioSessionId, ioThreadOf, MAX_IO_THREADS } from '../../../src/session/io/io-ids.ts';
import { randomTag } from '../../../src/events/tags.ts';

type Op = [string, ...unknown[]];

/** Records what a batch does, with each cork's frames together. */
function recorder(): { ops: Op[]; target: IoBatchTarget } {
  const ops: Op[] = [];
  const text = new TextDecoder();
  return {
    ops,
    target: {
      sendOne(id, frame, binary) {
        ops.push(['one', id, `${binary ? 'b' : 't'}:${text.decode(frame)}`]);
      },
      sendRun(id, frames) {
        const run: string[] = [];
        frames((frame, binary) => run.push(`${binary ? 'b' : 't'}:${text.decode(frame)}`));
        ops.push(['run', id, run]);
      },
      end(id, code, reason) {
        ops.push(['close', id, code, reason]);
        return true;
      },
      broadcast(ids, json, msgpack) {
        ops.push(['broadcast', ids, text.decode(json), text.decode(msgpack)]);
      },
    },
  };
}

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

test('a batch is applied in order; consecutive sends to one session are one run, a single send is sent alone', (t) => {
  const w = new IoBatchWriter();
  t.true(w.empty);
  w.send(2 ** 40 + 3, 'a1', false);
  w.send(2 ** 40 + 3, bytes('a2'), true);
  w.send(2 ** 41, 'b1', false);
  w.close(2 ** 41, 4010, 'bye — ünïcode');
  w.ids([2 ** 40 + 3, 2 ** 41], bytes('{"j":1}'), bytes('mp1'));
  w.send(2 ** 40 + 3, 'a3', false);
  w.all(bytes('json-all'), bytes('mp-all'));
  t.false(w.empty);
  const { ops, target } = recorder();
  applyIoBatch(w.take(), target);
  t.true(w.empty);
  t.deepEqual(ops, [
    ['run', 2 ** 40 + 3, ['t:a1', 'b:a2']],
    ['one', 2 ** 41, 't:b1'],
    ['close', 2 ** 41, 4010, 'bye — ünïcode'],
    ['broadcast', [2 ** 40 + 3, 2 ** 41], '{"j":1}', 'mp1'],
    ['one', 2 ** 40 + 3, 't:a3'],
    ['broadcast', null, 'json-all', 'mp-all'],
  ]);
});

test('frames of every length, past the first buffer, come out whole', (t) => {
  const w = new IoBatchWriter();
  const sizes = [0, 1, 7, 8, 9, 1000, 70_000, 300_000, 3];
  sizes.forEach((n, i) => w.send(1000 + (i % 2), 'x'.repeat(n), i % 3 === 0));
  const { ops, target } = recorder();
  applyIoBatch(w.take(), target);
  const frames = ops.map((op) => op[2] as string);
  t.deepEqual(frames.map((f) => f.length - 2), sizes);
  t.deepEqual(frames.map((f) => f[0]), sizes.map((_, i) => (i % 3 === 0 ? 'b' : 't')));
  // Alternating sessions: no two sends share a run.
  t.deepEqual(ops.map((op) => op[0]), sizes.map(() => 'one'));
});

test('a record it does not know stops the batch with an error naming it', (t) => {
  const buffer = new ArrayBuffer(16);
  new Uint8Array(buffer)[0] = 99;
  const { target } = recorder();
  t.throws(() => applyIoBatch(buffer, target), { message: 'session I/O batch: unknown record 99 at 0' });
});

test('a session id carries its I/O thread and its codec; random ids stay distinct', (t) => {
  const seen = new Set<number>();
  for (let thread = 0; thread < MAX_IO_THREADS; thread++) {
    for (const codec of ['json', 'msgpack'] as const) {
      const id = ioSessionId(randomTag(), thread, codec);
      t.true(Number.isSafeInteger(id) && id >= 2 ** 32);
      t.is(ioThreadOf(id), thread);
      t.is(id % 2, codec === 'msgpack' ? 1 : 0);
      seen.add(id);
    }
  }
  t.is(seen.size, MAX_IO_THREADS * 2);
});
