/** The records servers send each other: every kind written and read back, in order; cut batches fail loudly; log text. */
import test from 'ava';
import { applyRecords, packControl, RecordWriter, type ControlMessage, type RecordSink } from '../../../src/cluster/records.ts';
import { describeRecord } from '../../../src/cluster/message-log.ts';
import { encodeFrame } from '../../../src/session/codec.ts';

function recorder(): { sink: RecordSink; seen: unknown[][] } {
  const seen: unknown[][] = [];
  const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
  return {
    seen,
    sink: {
      send: (id, frames) => seen.push(['send', id, ...frames.map((f) => Buffer.from(f).toString('hex'))]),
      publish: (group, json, msgpack) => seen.push(['publish', group, text(json), Buffer.from(msgpack).toString('hex')]),
      broadcast: (json, msgpack) => seen.push(['broadcast', text(json), Buffer.from(msgpack).toString('hex')]),
      close: (id, code, reason) => seen.push(['close', id, code, reason]),
      group: (id, group, join) => seen.push(['group', id, group, join]),
      replaced: (id, account) => seen.push(['replaced', id, account]),
      control: (m: ControlMessage) => seen.push(['control', m]),
    },
  };
}

test('every record kind reads back as written, in order, with any bytes in names and frames', (t) => {
  const w = new RecordWriter();
  const json = encodeFrame('json', 'chat', { text: 'hé\n' }) as string;
  const msgpack = encodeFrame('msgpack', 'chat', { text: 'hé\n' }) as Uint8Array;
  const big = 'x'.repeat(200_000); // past the writer's first buffer
  w.send(4503599627370497, msgpack);
  w.send(2, json);
  w.publish('room ✓|1', Buffer.from(json), msgpack);
  w.broadcast(Buffer.from(json), msgpack);
  w.close(8, 4010, 'bye ✓');
  w.group(10, 'g\u0000h', true);
  w.group(12, '', false);
  w.control(packControl({ op: 'rq', id: 7, from: 'host:1', method: 'counter', args: { path: 'engine/sessions' } }));
  w.control(packControl({ op: 'inv', items: [['ArenaPlayer', 'id-1', 3]] }));
  w.send(14, big);
  const data = w.take();
  t.is(w.length, 0);
  const { sink, seen } = recorder();
  t.is(applyRecords(data, sink, () => undefined), 10);
  const mp = Buffer.from(msgpack).toString('hex');
  t.deepEqual(seen, [
    ['send', 4503599627370497, mp],
    ['send', 2, Buffer.from(json).toString('hex')],
    ['publish', 'room ✓|1', json, mp],
    ['broadcast', json, mp],
    ['close', 8, 4010, 'bye ✓'],
    ['group', 10, 'g\u0000h', true],
    ['group', 12, '', false],
    ['control', { op: 'rq', id: 7, from: 'host:1', method: 'counter', args: { path: 'engine/sessions' } }],
    ['control', { op: 'inv', items: [['ArenaPlayer', 'id-1', 3]] }],
    ['send', 14, Buffer.from(big).toString('hex')],
  ]);
});

test('the replaced record, as the routing script writes it, reads back', (t) => {
  const text = '4503599627370497|ada|lovelace';
  const data = Buffer.concat([Buffer.from([6]), Buffer.alloc(4), Buffer.from(text)]);
  data.writeUInt32LE(Buffer.byteLength(text), 1);
  const { sink, seen } = recorder();
  applyRecords(data, sink, () => undefined);
  t.deepEqual(seen, [['replaced', 4503599627370497, 'ada|lovelace']]);
});

test('a cut or unknown record stops the batch with an error saying where; records before it were applied', (t) => {
  const w = new RecordWriter();
  w.close(1, 4010, 'first');
  w.close(2, 4010, 'second');
  const whole = w.take();
  const { sink, seen } = recorder();
  t.throws(() => applyRecords(whole.subarray(0, whole.length - 3), sink, () => undefined), { message: /^a close record of 16 bytes is cut off at byte 20$/ });
  t.deepEqual(seen, [['close', 1, 4010, 'first']]);
  t.throws(() => applyRecords(Buffer.from([9, 0, 0, 0, 0]), recorder().sink, () => undefined), { message: 'unknown record kind 9 at byte 0' });
  t.throws(() => applyRecords(Buffer.from([1, 0, 0]), recorder().sink, () => undefined), { message: 'a record header is cut off at byte 0 of 3' });
});

test('message logging describes a record by kind, target, type and length; level 2 adds the message', (t) => {
  const w = new RecordWriter();
  w.send(3, encodeFrame('msgpack', 'pushed', { n: 1 }) as Uint8Array);
  const data = w.take();
  const body = data.subarray(5);
  t.is(describeRecord(1, body, 1), `kind=send, session=3, type=pushed, length=${body.length}`);
  t.is(describeRecord(1, body, 2), `kind=send, session=3, type=pushed, length=${body.length}, message={"type":"pushed","body":{"n":1}}`);
  w.publish('lobby', Buffer.from('{"type":"chat","body":1}'), new Uint8Array([0x90]));
  const pub = w.take().subarray(5);
  t.is(describeRecord(2, pub, 1), `kind=publish, group=lobby, type=chat, length=${pub.length}`);
  w.control(packControl({ op: 'rq', id: 1, from: 'a:1', method: 'flag', args: { name: 'v', text: '1' } }));
  const ctl = w.take().subarray(5);
  t.is(describeRecord(7, ctl, 1), `kind=control, op=rq, method=flag, length=${ctl.length}`);
  t.is(describeRecord(1, new Uint8Array([1, 2]), 2), 'kind=send, length=2, message=<2 bytes that do not decode>');
});

test('a run of sends is handed over per session, in order; any other record ends the run', (t) => {
  const w = new RecordWriter();
  const f = (n: number): string => `{"type":"n","body":${n}}`;
  w.send(1, f(1));
  w.send(2, f(2));
  w.send(1, f(3));
  w.close(9, 4010, 'x');
  w.send(1, f(4));
  w.send(2, f(5));
  const seen: unknown[][] = [];
  applyRecords(w.take(), {
    ...recorder().sink,
    send: (id, frames) => seen.push([id, ...frames.map((x) => Buffer.from(x).toString())]),
    close: (id) => seen.push(['close', id]),
  }, () => undefined);
  t.deepEqual(seen, [[1, f(1), f(3)], [2, f(2)], ['close', 9], [1, f(4)], [2, f(5)]]);
});

test('a control record that cannot be decoded is skipped and told; the records after it are applied', (t) => {
  const w = new RecordWriter();
  // msgpack encodes a Map keyed by an object, and cannot read it back.
  w.control(packControl({ op: 'rq', id: 1, from: 'a:1', method: 'invoke', args: { m: new Map<unknown, number>([[{ a: 1 }, 1]]) } }));
  w.send(7, '{"type":"n","body":1}');
  w.control(packControl({ op: 'rs', id: 2, ok: true, value: 5 }));
  const seen: unknown[] = [];
  const skipped: string[] = [];
  const count = applyRecords(w.take(), {
    ...recorder().sink,
    send: (id, frames) => seen.push([id, frames.length]),
    control: (m) => seen.push(m),
  }, (why) => skipped.push(why));
  t.is(count, 3);
  t.deepEqual(seen, [[7, 1], { op: 'rs', id: 2, ok: true, value: 5 }]);
  t.is(skipped.length, 1);
  t.regex(skipped[0]!, /^a control record of \d+ bytes could not be decoded \(.+\)$/);
});
