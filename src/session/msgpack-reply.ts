/**
 * msgpack replies built fast: the envelope `{type, body, id}` exactly as msgpackr writes it,
 * from the type's cached prefix and the body packed in place. Used by `encodeFrame` (codec.ts).
 */
import { Packr, REUSE_BUFFER_MODE } from 'msgpackr';

// No records: replies are the plain msgpack maps msgpackr writes for the envelope (the tests compare).
const packr = new Packr({ useRecords: false });
/** Types whose prefixes are kept (more are built per reply). */
const MAX_PREFIXES = 1024;

/** A pack whose bytes stay in msgpackr's buffer, between `start` and `end`, until the next pack. */
type PackedInPlace = Uint8Array & { start: number; end: number };

/** Packs `value` into msgpackr's own buffer, with no view made of it. */
function packInPlace(value: unknown): PackedInPlace {
  return packr.pack(value, REUSE_BUFFER_MODE) as unknown as PackedInPlace;
}

/** Copies msgpackr's last packed bytes into `into` at `at`; returns their length. */
function copyPacked(packed: PackedInPlace, into: Uint8Array, at: number): number {
  const { start, end } = packed;
  const length = end - start;
  // A loop beats making a view (Buffer's subarray looks up its species) for the usual small body.
  if (length <= 64) for (let i = 0; i < length; i++) into[at + i] = packed[start + i]!;
  else into.set(packed.subarray(start, end), at);
  return length;
}

/** Per message type, the msgpack bytes of `{type, body:` (a map of 2, and of 3 with an id). */
const msgpackPrefixes = new Map<string, [Uint8Array, Uint8Array]>();
// `a2 "id"`: the key of the request id, after the body.
const ID_KEY_BYTES = 3;
let scratch = new Uint8Array(4096);
/**
 * Views of the scratch buffer's first bytes by length, made once: a reply's view costs no
 * allocation (frames of one kind mostly repeat a few lengths).
 */
const SMALL_VIEWS = 256;
let scratchViews: Array<Uint8Array | undefined> = [];

/** `scratch[0, size)`. */
function scratchView(size: number): Uint8Array {
  if (size >= SMALL_VIEWS) return scratch.subarray(0, size);
  let view = scratchViews[size];
  if (view === undefined) {
    view = scratch.subarray(0, size);
    scratchViews[size] = view;
  }
  return view;
}

/**
 * The msgpack bytes of `{type, body, id}` as msgpackr writes the envelope: the type's cached
 * prefix, then only the body (and the id) are packed. A view of a scratch buffer, valid until
 * the next call.
 */
export function msgpackFrame(type: string, body: unknown, id: number | undefined): Uint8Array {
  let prefixes = msgpackPrefixes.get(type);
  if (prefixes === undefined) {
    // The envelope with a nil body, less the nil: what every frame of this type starts with.
    const two = packr.pack({ type, body: null });
    const three = packr.pack({ type, body: null, id: 0 });
    prefixes = [two.slice(0, two.length - 1), three.slice(0, three.length - 1 - ID_KEY_BYTES - 1)];
    if (msgpackPrefixes.size < MAX_PREFIXES) msgpackPrefixes.set(type, prefixes);
  }
  const prefix = prefixes[id === undefined ? 0 : 1];
  const packed = packInPlace(body);
  let size = prefix.length + packed.end - packed.start;
  if (size + 12 > scratch.length) {
    scratch = new Uint8Array(Math.max(size + 12, scratch.length * 2));
    scratchViews = [];
  }
  for (let i = 0; i < prefix.length; i++) scratch[i] = prefix[i]!;
  copyPacked(packed, scratch, prefix.length);
  if (id !== undefined) {
    // `a2 "id"` and the id (at most 9 bytes): the 12 bytes kept free above.
    scratch[size] = 0xa2;
    scratch[size + 1] = 0x69;
    scratch[size + 2] = 0x64;
    size += 3 + copyPacked(packInPlace(id), scratch, size + 3);
  }
  return scratchView(size);
}
