/**
 * The native JSON <-> msgpack transcoder, reply frames and tags against their JavaScript
 * references (JSON.parse + msgpackr, msgpackr + JSON.stringify, encodeFrame, namedTag), on
 * fixed cases and on random documents.
 */
import test from 'ava';
import { Packr, Unpackr } from 'msgpackr';
import { nativeTesting } from '../../../src/native.ts';
import { encodeFrame } from '../../../src/session/codec.ts';
import { namedTag } from '../../../src/events/tags.ts';

const testing = nativeTesting();

const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false });

/** A small deterministic generator (xorshift), so a failure can be replayed from its seed. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const CHARS = ['a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', '\u0001', '\u001f', '\u007f', 'é', '€', '\u2028', '😀', '中'];

function randomString(r: () => number): string {
  let s = '';
  const n = Math.floor(r() * (r() < 0.1 ? 300 : 12));
  for (let i = 0; i < n; i++) s += CHARS[Math.floor(r() * CHARS.length)];
  return s;
}

function randomKey(r: () => number): string {
  const p = r();
  if (p < 0.2) return String(Math.floor(r() * 20));                       // array-index keys
  if (p < 0.25) return ['4294967294', '4294967295', '01', '-1', '1.5'][Math.floor(r() * 5)]!;
  if (p < 0.3) return '__proto__';
  return randomString(r);
}

function randomNumber(r: () => number): number {
  const p = r();
  if (p < 0.3) return Math.floor(r() * 300) - 150;
  if (p < 0.4) return Math.floor((r() - 0.5) * 2 ** 34);
  if (p < 0.5) return Math.floor((r() - 0.5) * 2 ** 54);
  if (p < 0.6) return [0, -0, 2 ** 32 - 1, 2 ** 32, -(2 ** 31), -(2 ** 31) - 1, 1e21, 1e-7, 5e-324, Number.MAX_VALUE][Math.floor(r() * 10)]!;
  // Any finite double, from random bits.
  const view = new DataView(new ArrayBuffer(8));
  view.setUint32(0, Math.floor(r() * 2 ** 32));
  view.setUint32(4, Math.floor(r() * 2 ** 32));
  const d = view.getFloat64(0);
  return Number.isFinite(d) ? d : r();
}

function randomValue(r: () => number, depth: number): unknown {
  const p = r();
  if (depth > 4 || p < 0.35) {
    const q = r();
    if (q < 0.1) return null;
    if (q < 0.2) return r() < 0.5;
    if (q < 0.6) return randomNumber(r);
    return randomString(r);
  }
  const n = Math.floor(r() * (r() < 0.05 ? 40 : 6));
  if (p < 0.6) return Array.from({ length: n }, () => randomValue(r, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) Object.defineProperty(o, randomKey(r), { value: randomValue(r, depth + 1), enumerable: true, writable: true, configurable: true });
  return o;
}

/** JSON text with a duplicate key and odd spacing spliced in now and then. */
function randomJson(r: () => number, value: unknown): string {
  let text = JSON.stringify(value);
  if (r() < 0.3) text = text.replace(/,/g, () => (r() < 0.3 ? ' ,\n\t' : ','));
  if (r() < 0.2 && text.startsWith('{"')) text = `{"dup":1,${text.slice(1, -1)}${text.length > 2 ? ',' : ''}"dup":[2]}`;
  return text;
}

test('JSON to msgpack gives msgpackr.pack(JSON.parse(text)) byte for byte, on random documents', (t) => {
  const r = rng(20240611);
  for (let i = 0; i < 3000; i++) {
    const text = randomJson(r, randomValue(r, 0));
    const expected = Buffer.from(packr.pack(JSON.parse(text))).toString('hex');
    const got = Buffer.from(testing.jsonToMsgpack(text)).toString('hex');
    if (got !== expected) {
      t.is(got, expected, `case ${i}: ${text}`);
      return;
    }
  }
  t.pass();
});

test('msgpack to JSON gives JSON.stringify of the packed value, on random documents', (t) => {
  const r = rng(7);
  for (let i = 0; i < 3000; i++) {
    const value = randomValue(r, 0);
    const bytes = packr.pack(value);
    // msgpackr.unpack would agree but for one key: it renames "__proto__", the transcoder does not.
    const expected = JSON.stringify(value);
    const got = testing.msgpackToJson(bytes);
    if (got !== expected) {
      t.is(got, expected, `case ${i}: ${Buffer.from(bytes).toString('hex')}`);
      return;
    }
  }
  t.pass();
});

test('msgpack to JSON follows msgpackr for what other encoders write', (t) => {
  const cases: string[] = [
    '82a16201020c', // an index key after a string key
    '83a16101a16202a16103', // a repeated key
    '82a162d40000a16301', // an undefined value
    '93d40000c0c3', // undefined in an array
    '81c001', '81c301', '81cb3ff800000000000001', '81ff01', '81cc8001', // non-string keys
    'ca3dcccccd', 'ca7f800000', // float32
    'c403010203', // binary
    'd6ff00000001', 'd7ff0000000400000001', 'c70cff00000001fffffff000000000', // timestamps
    // a fixmap of 15 string keys
    '8f' + Array.from({ length: 15 }, (_, i) => `a1${(0x61 + i).toString(16)}${i.toString(16).padStart(2, '0')}`).join(''),
  ];
  for (const hex of cases) {
    const bytes = Buffer.from(hex, 'hex');
    t.is(testing.msgpackToJson(bytes), JSON.stringify(unpackr.unpack(bytes)), hex);
  }
  t.is(testing.msgpackToJson(Buffer.from('d40000', 'hex')), undefined);
  t.is(testing.msgpackToJson(Buffer.from('81a95f5f70726f746f5f5f01', 'hex')), '{"__proto__":1}', 'as written');
  for (const bad of ['a2c328', 'd40501', '92', 'c1', '0101']) {
    t.throws(() => testing.msgpackToJson(Buffer.from(bad, 'hex')), { code: 'GSF_ERR_NATIVE_ARGUMENT' }, bad);
  }
});

test('msgpack timestamps become the text toISOString writes, over the whole range of Date', (t) => {
  const r = rng(7);
  const times = [0, -1, 1, 999, -999, 8.64e15, -8.64e15, Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1), Date.UTC(-1, 0, 1), Date.UTC(0, 0, 1)];
  for (let i = 0; i < 3000; i++) times.push(Math.trunc((r() * 2 - 1) * (r() < 0.5 ? 4e12 : 8.64e15)));
  for (const ms of times) {
    const bytes = packr.pack(new Date(ms));
    const got = testing.msgpackToJson(bytes);
    if (got !== JSON.stringify(new Date(ms))) {
      t.is(got, JSON.stringify(new Date(ms)), `time ${ms}`);
      return;
    }
  }
  t.pass();
});

test('invalid JSON is refused where JSON.parse refuses it', (t) => {
  for (const bad of ['', '[1,]', '{"a" 1}', "{'a':1}", '01', '1.', '.5', '+1', 'NaN', '"\t"', '[1] x', '{"a":1,}']) {
    t.throws(() => JSON.parse(bad));
    t.throws(() => testing.jsonToMsgpack(bad), { instanceOf: TypeError }, bad);
  }
});

test('reply frames equal encodeFrame for random bodies, ids and both codecs', (t) => {
  const r = rng(99);
  for (let i = 0; i < 1500; i++) {
    const body = r() < 0.1 ? undefined : randomValue(r, 0);
    const type = r() < 0.9 ? 'game.move' : randomString(r) || 'x';
    const id = r() < 0.5 ? undefined : Math.floor((r() - 0.3) * 2 ** (r() < 0.5 ? 10 : 53));
    const bytes = body === undefined ? null : packr.pack(body);
    for (const session of [2 ** 33, 2 ** 33 + 1]) {
      const codec = session % 2 ? 'msgpack' : 'json';
      const expected = encodeFrame(codec, type, body, id);
      const got = testing.pluginEncodeFrame(session, type, bytes, id);
      const same = typeof expected === 'string' ? got === expected : Buffer.from(got as Uint8Array).equals(Buffer.from(expected));
      if (!same) {
        t.deepEqual(got, expected, `case ${i} (${codec})`);
        return;
      }
    }
  }
  t.pass();
});

test('named tags equal namedTag(); random tags lie in [2^32, 2^53)', (t) => {
  const r = rng(3);
  for (let i = 0; i < 2000; i++) {
    const name = randomString(r);
    t.is(testing.pluginNamedTag(name), namedTag(name), name);
  }
  for (let i = 0; i < 1000; i++) {
    const tag = testing.pluginRandomTag();
    t.true(Number.isSafeInteger(tag) && tag >= 2 ** 32 && tag < 2 ** 53);
  }
});
