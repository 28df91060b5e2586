import test from 'ava';
import { Packr, Unpackr } from 'msgpackr';
import { checkEnvelope, decodeCanonicalJson, decodeCanonicalMsgpack, decodeFrame, DecodeError, encodeFrame, peekType, sessionCodec, withCodecBit } from '../../../src/session/codec.ts';
import { ProtocolError } from '../../../src/session/protocol.ts';
import { checkRecord, parseMaintenanceDate } from '../../../src/maintenance/state.ts';

const text = (s: string) => new TextEncoder().encode(s);
const packr = new Packr({ useRecords: false });

test('peekType reads canonical JSON and msgpack frames and gives up on the rest', (t) => {
  t.is(peekType(text('{"type":"chat.say","body":1}'), false), 'chat.say');
  t.is(peekType(text('{"body":1,"type":"chat.say"}'), false), null);
  t.is(peekType(text('{"type":"a\\"b","body":1}'), false), null);
  t.is(peekType(text('{"type":"","body":1}'), false), null);
  t.is(peekType(text('{"type":"x'), false), null);
  t.is(peekType(packr.pack({ type: 'chat.say', body: 1 }), true), 'chat.say');
  t.is(peekType(new Uint8Array([0x82, 0xa4, 0x74, 0x79, 0x70, 0x65, 0xa2, 0x68, 0x69, 0xc0, 0xc0]), true), 'hi');
  t.is(peekType(packr.pack({ body: 1, type: 'chat.say' }), true), null);
  t.is(peekType(packr.pack({ type: 'x'.repeat(40), body: 1 }), true), 'x'.repeat(40));
  t.is(peekType(new Uint8Array([0xc1]), true), null);
});

test('frames round-trip in both codecs; ids are kept', (t) => {
  for (const codec of ['json', 'msgpack'] as const) {
    const frame = encodeFrame(codec, 't', { a: [1, 'b'] }, 9);
    const bytes = typeof frame === 'string' ? text(frame) : frame;
    t.deepEqual(decodeFrame(bytes, codec), { type: 't', body: { a: [1, 'b'] }, id: 9 });
  }
});

test('envelope checks name the problem', (t) => {
  const code = (v: unknown) => { try { checkEnvelope(v); return 'ok'; } catch (e) { return (e as DecodeError).code; } };
  t.is(code({ type: 'x' }), 'ok');
  t.is(code({ type: 'x', body: null, id: 3 }), 'ok');
  t.is(code(null), ProtocolError.malformed);
  t.is(code({ type: 'x', id: 1.5 }), ProtocolError.malformed);
  t.is(code({ type: 'x', other: 1 }), ProtocolError.malformed);
});

test('session ids carry their codec in the lowest bit', (t) => {
  for (const r of [2 ** 32, 2 ** 40 + 1, 2 ** 52 + 7]) {
    t.is(sessionCodec(withCodecBit(r, 'json')), 'json');
    t.is(sessionCodec(withCodecBit(r, 'msgpack')), 'msgpack');
  }
});

test('maintenance dates and records', (t) => {
  t.is(parseMaintenanceDate('2026/11/22 03:05'), Date.UTC(2026, 10, 22, 3, 5));
  for (const bad of ['2026/13/01 00:00', '2026/02/29 00:00', '2026/1/01 00:00', '2026/01/01 24:00', '2026/01/01 00:60', '2026-01-01 00:00']) {
    t.is(parseMaintenanceDate(bad), null, bad);
  }
  t.is(parseMaintenanceDate('2028/02/29 00:00'), Date.UTC(2028, 1, 29));
  const r = { date_start: '2026/01/01 00:00', date_end: '2026/01/01 01:00', messages: 'm' };
  t.is(checkRecord(r, false), null);
  t.deepEqual(checkRecord({ ...r, under_maintenance: true }, false), { field: 'under_maintenance', message: "unknown key 'under_maintenance' (allowed: date_start, date_end, messages)" });
  t.is(checkRecord({ ...r, under_maintenance: true }, true), null);
});

test('json frames are exactly what JSON.stringify writes for the envelope', (t) => {
  const keyed = { toJSON: (key: string) => `key:${key}` };
  const bodies: unknown[] = [
    undefined, null, 0, -1.5, 'he said "hi" ✓\n', true, [1, 'a', null, undefined], { a: { b: [1, 2] }, c: undefined },
    new Date(0), keyed, () => 1, { nested: keyed }, '',
  ];
  const types = ['echo', 'chat.say', 'quote"type', 'ünï', ''];
  const ids: Array<number | undefined> = [undefined, 0, 7, 2 ** 53 - 1, 1.5, NaN];
  let checked = 0;
  for (const type of types) {
    for (const body of bodies) {
      for (const id of ids) {
        const expected = JSON.stringify(id === undefined ? { type, body } : { type, body, id });
        // twice: the second call takes the cached prefix
        t.is(encodeFrame('json', type, body, id), expected, `${type} ${String(body)} ${id}`);
        t.is(encodeFrame('json', type, body, id), expected);
        checked++;
      }
    }
  }
  t.is(checked, types.length * bodies.length * ids.length);
});

test('msgpack frames are exactly what msgpackr writes for the envelope', (t) => {
  const envelopePackr = new Packr({ useRecords: false });
  const bodies: unknown[] = [
    undefined, null, 0, -1.5, 2 ** 40, 'he said "hi" ✓\n', true, [1, 'a', null, undefined], { a: { b: [1, 2] }, c: undefined },
    new Date(0), new Uint8Array([1, 2, 3]), { big: 'x'.repeat(70_000) }, new Map([['k', 1]]), '',
  ];
  const types = ['echo', 'chat.say', 'ünï', 'a-type-name-longer-than-thirty-one-bytes', ''];
  const ids: Array<number | undefined> = [undefined, 0, 7, 300, 70_000, 2 ** 40, 2 ** 53 - 1, -5];
  let checked = 0;
  for (const type of types) {
    for (const body of bodies) {
      for (const id of ids) {
        const expected = Buffer.from(envelopePackr.pack(id === undefined ? { type, body } : { type, body, id })).toString('hex');
        const hex = (frame: string | Uint8Array): string => Buffer.from(frame as Uint8Array).toString('hex');
        // twice: the second call takes the cached prefix
        t.is(hex(encodeFrame('msgpack', type, body, id)), expected, `${type} ${String(body)} ${id}`);
        t.is(hex(encodeFrame('msgpack', type, body, id)), expected);
        checked++;
      }
    }
  }
  t.is(checked, types.length * bodies.length * ids.length);
});

test('the canonical JSON fast path gives JSON.parse results or leaves the frame to the full decoder', (t) => {
  // Each frame sits inside a larger buffer, as in a worker's claim buffer.
  let claim = 0;
  const fast = (frame: string, type: string) => {
    const bytes = text(`xx${frame}yy`);
    return decodeCanonicalJson({ bytes, start: 2, end: bytes.length - 2, claim: ++claim, claimEnd: bytes.length }, type);
  };
  const canonical = [
    '{"type":"echo","body":{"n":1,"text":"hello"}}',
    '{"type":"echo","body":{"n":1},"id":42}',
    '{"type":"echo","body":7,"id":0}',
    '{"type":"echo","body":-5}',
    '{"type":"echo","body":[1,"id",2],"id":-3}',
    '{"type":"echo","body":"a,\\"id\\":5","id":9007199254740991}',
    '{"type":"echo","body":{"id":5}}',
    '{"type":"echo","body":null,"id":12}',
    '{"type":"echo","body":"h\u00e9llo \u2603"}',
  ];
  for (const frame of canonical) t.deepEqual(fast(frame, 'echo'), JSON.parse(frame), frame);
  t.deepEqual(Object.keys(fast('{"type":"echo","body":1,"id":2}', 'echo')!), ['type', 'body', 'id']);
  // Not canonical, or not valid: the full decoder handles (and names the error of) these.
  const others = [
    '{"type":"echo","body":1,"body":2}', // duplicate key: JSON.parse keeps the last
    '{"type":"echo", "body":1}',
    '{"type":"echo","id":1,"body":2}',
    '{"type":"echo"}',
    '{"type":"echo","body":1,"id":05}',
    '{"type":"echo","body":1,"id":1.5}',
    '{"type":"echo","body":1,"id":99999999999999999}',
    '{"type":"echo","body":1,"id":9007199254740992}',
    '{"type":"echo","body":1,"id":-}',
    '{"type":"echo","body":{"a":1}',
    '{"type":"echo","body":}',
    '{"type":"echo","body":1,"extra":2}',
    '{"type":"echo","body":1} ',
  ];
  for (const frame of others) t.is(fast(frame, 'echo'), null, frame);
  // The type must be the one the main thread matched: another length breaks the key check.
  t.is(fast('{"type":"echo","body":1}', 'ech'), null);
});

test('the canonical msgpack fast path gives msgpackr results or leaves the frame to the full decoder', (t) => {
  const packr = new Packr({ useRecords: false });
  const unpackr = new Unpackr({ useRecords: false });
  let claim = 0;
  // Each frame sits inside a larger buffer, as in a worker's claim buffer, between junk bytes:
  // near its start, and far into it (msgpackr reads strings differently past 140 bytes).
  const at = (offset: number) => (frame: Uint8Array, type: string) => {
    const bytes = new Uint8Array(offset + frame.length + 4);
    bytes.fill(0xa2);
    bytes.set(frame, offset);
    return decodeCanonicalMsgpack({ bytes, start: offset, end: offset + frame.length, claim: ++claim, claimEnd: bytes.length }, type);
  };
  const fast = at(4);
  const deep = at(4000);
  const envelopes: Array<Record<string, unknown>> = [
    { type: 'echo', body: { n: 1, text: 'hello' } },
    { type: 'echo', body: { names: ['a'.repeat(20), 'b'.repeat(40), 'ünï'], long: 'c'.repeat(200) }, id: 9 },
    { type: 'echo', body: { s: 'd'.repeat(100), t: 'e'.repeat(31) } },
    { type: 'echo', body: { n: 1 }, id: 42 },
    { type: 'echo', body: 7, id: 0 },
    { type: 'echo', body: -5 },
    { type: 'echo', body: [1, 'id', 2], id: -3 },
    { type: 'echo', body: { id: 5 }, id: 5 },
    { type: 'echo', body: 'xx\u00a2id', id: 300 },
    { type: 'echo', body: null, id: 2 ** 40 },
    { type: 'echo', body: 'h\u00e9llo \u2603' },
    { type: 'echo', body: new Uint8Array([0xa2, 0x69, 0x64, 0x05]), id: 5 },
  ];
  for (const e of envelopes) {
    const frame = Uint8Array.from(packr.pack(e));
    // What the full decoder gives (a frame's bytes in a Uint8Array, as on a worker).
    const full = decodeFrame(frame, 'msgpack');
    t.deepEqual(fast(frame, 'echo'), full, JSON.stringify(e));
    t.deepEqual(deep(frame, 'echo'), full, JSON.stringify(e));
    t.deepEqual(full, unpackr.unpack(frame) as unknown as typeof full);
    // A fixmap header (as other msgpack writers put it) reads the same.
    const fix = Uint8Array.from([0x80 + Object.keys(e).length, ...frame.subarray(3)]);
    t.deepEqual(fast(fix, 'echo'), full);
  }
  // Not canonical, or not valid: the full decoder handles (and names the error of) these.
  const others = [
    packr.pack({ type: 'echo', id: 1, body: 2 }),
    packr.pack({ type: 'echo' }),
    packr.pack({ type: 'echo', body: 1, extra: 2 }),
    packr.pack({ type: 'echo', body: 1, id: 1.5 }),
    packr.pack({ type: 'echo', body: 1, id: 'x' }),
    packr.pack({ type: 'echo', body: 'abc' }).subarray(0, -1),
    Uint8Array.from([...packr.pack({ type: 'echo', body: 1 }), 0x01]),
  ];
  for (const frame of others) t.is(fast(frame, 'echo'), null, Buffer.from(frame).toString('hex'));
  // The type must be the one the main thread matched: another length breaks the key check.
  t.is(fast(packr.pack({ type: 'echo', body: 1 }), 'ech'), null);
});

test('frames of one claim decode the same whether the claim is all ASCII or not', (t) => {
  const frames = [
    '{"type":"echo","body":{"n":1,"text":"hello"}}',
    '{"type":"echo","body":[1,2,3],"id":7}',
    '{"type":"echo","body":"plain"}',
  ];
  for (const extra of ['{"type":"echo","body":"ascii"}', '{"type":"echo","body":"h\u00e9llo \u2603 \ud83c\udfae"}']) {
    const all = [...frames, extra, ...frames];
    const parts = all.map(text);
    const bytes = new Uint8Array(parts.reduce((a, p) => a + p.length, 0) + 16);
    let offset = 0;
    const spans = parts.map((p) => {
      bytes.set(p, offset);
      offset += p.length;
      return [offset - p.length, offset] as const;
    });
    // One claim: the frames share its number, as the worker's frames of one take do.
    spans.forEach(([start, end], i) => {
      t.deepEqual(decodeCanonicalJson({ bytes, start, end, claim: 1000, claimEnd: offset }, 'echo'), JSON.parse(all[i]!), all[i]);
    });
  }
  // A claim of other bytes (invalid UTF-8 next to the frame) still gives the frame's own text.
  const frame = text('{"type":"echo","body":"ok"}');
  const bytes = new Uint8Array([0xe2, 0x82, ...frame, 0xff]);
  t.deepEqual(decodeCanonicalJson({ bytes, start: 2, end: 2 + frame.length, claim: 1001, claimEnd: bytes.length }, 'echo'),
    { type: 'echo', body: 'ok' });
});

test('binary fields of msgpack frames are copies, not views of the frame bytes', (t) => {
  const bytes = packr.pack({ type: 'save', body: { blob: new Uint8Array([1, 2, 3]) } });
  const decoded = decodeFrame(bytes, 'msgpack') as { body: { blob: Uint8Array } };
  bytes.fill(0); // a worker's claim buffer is overwritten by the next claim
  t.deepEqual([...decoded.body.blob], [1, 2, 3]);
});
