/**
 * A native message handler's frames written by the addon straight into a worker's outbound
 * ring: byte for byte the records the worker's own writer makes of the same frames, a pad
 * record before a record that would pass the end, and the frames handed back instead when they
 * do not all fit now, one is too large for the ring, or the call failed.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { Packr } from 'msgpackr';
import { native, ContextCell, EffectKind, EventKind, NativeStatus, type NativeCallResult } from '../../src/native.ts';
import { OutboundWriter, setOutboundListening } from '../../src/session/worker/outbound-writer.ts';
import { CONTROL_BYTES, Control, HEADER_BYTES, RingOp, FLAG_BINARY } from '../../src/session/outbound-ring.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const library = path.join(root, 'test', 'fixtures', 'native-plugins', 'native-replies', 'build', 'native-replies.so');
const packr = new Packr({ useRecords: false });
const JSON_SESSION = 2;
const MSGPACK_SESSION = 3;

const info = native.pluginLoad(library);
const handler = info.messages.find((m) => m.type === 'replies.burst')!.handler;
const cells = new Float64Array(native.pluginContextView());
setOutboundListening(true);

/** Calls replies.burst for `session` with `body` and request id 5; `ring` at `position`, or none. */
function call(session: number, body: unknown, ring: Uint8Array | null = null, position = 0): ReturnType<typeof native.pluginCallMessage> {
  const envelope = { type: 'replies.burst', id: 5, body };
  const bytes = session % 2 === 1 ? packr.pack(envelope) : Buffer.from(JSON.stringify(envelope));
  cells[ContextCell.eventId] = 1;
  cells[ContextCell.tag] = 2 ** 40;
  cells[ContextCell.kind] = EventKind.network;
  cells[ContextCell.sessionId] = session;
  cells[ContextCell.nameId] = native.intern('replies.burst');
  cells[ContextCell.frameStart] = 0;
  cells[ContextCell.frameEnd] = bytes.length;
  cells[ContextCell.ringWrite] = position;
  return native.pluginCallMessage(handler, bytes, ring);
}

/** The frames a call hands back without a ring: [session, frame] per send effect. */
function sends(outcome: unknown): Array<[number, string | Uint8Array]> {
  // A call that succeeded hands back its effects as they are; a failed one, within its result.
  const effects = Array.isArray(outcome) ? outcome as unknown[] : (outcome as NativeCallResult).effects;
  const out: Array<[number, string | Uint8Array]> = [];
  for (let i = 0; i < effects.length; i += 3) {
    if (effects[i] !== EffectKind.send) throw new Error(`unexpected effect ${String(effects[i])}`);
    out.push([effects[i + 1] as number, effects[i + 2] as string | Uint8Array]);
  }
  return out;
}

/** A bare ring of `capacity` bytes with its write position at `write` and nothing unconsumed. */
function bareRing(capacity: number, write: number): Uint8Array {
  const ring = new Uint8Array(new SharedArrayBuffer(CONTROL_BYTES + capacity));
  const control = new Int32Array(ring.buffer, 0, CONTROL_BYTES / 4);
  control[Control.capacity] = capacity;
  control[Control.consumed] = write | 0;
  return ring;
}

for (const session of [JSON_SESSION, MSGPACK_SESSION]) {
  const codec = session === JSON_SESSION ? 'json' : 'msgpack';

  test(`frames go into the ring as the worker's writer would write them (${codec})`, (t) => {
    const body = { count: 3, size: 7 };
    const direct = new OutboundWriter(64 * 1024);
    const at = direct.nativePosition({ parked: false });
    t.is(at, 0);
    const outcome = call(session, body, direct.ringBytes(), at);
    if (typeof outcome !== 'number') return t.fail(`the call handed back ${JSON.stringify(outcome)}`);
    const end = outcome;
    direct.nativeWritten(end);
    // The same call without a ring hands the frames back; the writer then writes them.
    const handedBack = call(session, body);
    t.true(Array.isArray(handedBack), 'a call that succeeded with several frames hands back its effects array');
    const frames = sends(handedBack);
    t.is(frames.length, 4, 'three parts and the reply');
    const written = new OutboundWriter(64 * 1024);
    for (const [id, frame] of frames) written.send(id, frame, { parked: false, held: null });
    t.is(written.nativePosition({ parked: false }), end, 'the writer ends where the addon did');
    t.deepEqual(direct.ringBytes().subarray(CONTROL_BYTES, CONTROL_BYTES + end),
      written.ringBytes().subarray(CONTROL_BYTES, CONTROL_BYTES + end));
    // And the records say what the handler sent: to this session, in order.
    const ring = direct.ringBytes();
    const view = new DataView(ring.buffer, CONTROL_BYTES);
    const decoded: unknown[] = [];
    for (let p = 0; p < end;) {
      const length = view.getInt32(p, true);
      t.is(view.getUint8(p + 4), RingOp.send);
      t.is(view.getUint8(p + 5), session === MSGPACK_SESSION ? FLAG_BINARY : 0);
      t.is(view.getFloat64(p + 16, true), session);
      const frame = ring.subarray(CONTROL_BYTES + p + HEADER_BYTES, CONTROL_BYTES + p + HEADER_BYTES + view.getInt32(p + 8, true));
      decoded.push(session === MSGPACK_SESSION ? packr.unpack(frame) : JSON.parse(Buffer.from(frame).toString('utf8')));
      p += length;
    }
    t.deepEqual(decoded, [
      { type: 'replies.part', body: { i: 0, text: 'aaaaaaa' } },
      { type: 'replies.part', body: { i: 1, text: 'bbbbbbb' } },
      { type: 'replies.part', body: { i: 2, text: 'ccccccc' } },
      { type: 'replies.burst', id: 5, body: { count: 3 } },
    ]);
  });
}

test('a record that would pass the end of the data area follows a pad record at offset 0', (t) => {
  const capacity = 4096;
  const start = 2 ** 32 - 40; // positions are counters modulo 2^32: this one wraps them too
  const ring = bareRing(capacity, start);
  const end = call(JSON_SESSION, { count: 1, size: 30 }, ring, start);
  t.is(typeof end, 'number');
  const view = new DataView(ring.buffer, CONTROL_BYTES);
  const phys = start & (capacity - 1);
  t.is(view.getInt32(phys, true), 40, 'the pad fills the rest of the area');
  t.is(view.getUint8(phys + 4), RingOp.pad);
  const first = view.getInt32(0, true);
  const second = view.getInt32(first, true);
  t.is(view.getUint8(4), RingOp.send);
  t.is(view.getUint8(first + 4), RingOp.send);
  t.is(end, (start + 40 + first + second) % 2 ** 32);
});

test('frames that do not all fit now, or one too large for the ring, come back for the writer', (t) => {
  const capacity = 1024;
  // 40 bytes free: the part and the reply need more.
  const full = bareRing(capacity, 0);
  new Int32Array(full.buffer, 0, CONTROL_BYTES / 4)[Control.consumed] = -(capacity - 40);
  const a = call(JSON_SESSION, { count: 1, size: 10 }, full, 0);
  t.deepEqual(sends(a).map(([id]) => id), [JSON_SESSION, JSON_SESSION]);
  t.true(full.subarray(CONTROL_BYTES).every((b) => b === 0), 'nothing was written');
  // Over a quarter of the data area: the writer carries it beside the ring.
  const roomy = bareRing(capacity, 0);
  const b = call(JSON_SESSION, { count: 1, size: 300 }, roomy, 0);
  t.is(typeof b, 'object');
  t.is(sends(b).length, 2);
  t.true(roomy.subarray(CONTROL_BYTES).every((x) => x === 0));
  // The same small call fits an empty ring.
  t.is(typeof call(JSON_SESSION, { count: 1, size: 10 }, roomy, 0), 'number');
});

test('a failed call hands back its status and frames, and writes nothing', (t) => {
  const ring = bareRing(4096, 0);
  const r = call(MSGPACK_SESSION, { count: 2, size: 4, fail: true }, ring, 0) as NativeCallResult;
  t.is(r.status, NativeStatus.internal);
  t.is(r.error, 'failed after 2 parts');
  t.is(r.messageId, 5);
  t.is(sends(r).length, 2);
  t.true(ring.subarray(CONTROL_BYTES).every((x) => x === 0));
});
