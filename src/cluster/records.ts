/**
 * The records servers send each other through Redis. A batch is the concatenation of records,
 * each `u8 kind, u32 body length (little endian), body`:
 *
 *   send       f64 session id, frame (in the session's codec)
 *   publish    u16 group length, group, u32 JSON length, JSON frame, msgpack frame
 *   broadcast  u32 JSON length, JSON frame, msgpack frame (every session of the server)
 *   close      f64 session id, u16 close code, reason
 *   group      f64 session id, u8 join, group
 *   replaced   text `<session id>|<account>` (written by the routing script in Redis)
 *   control    msgpack of a `ControlMessage` (invocations, requests and answers, invalidations)
 *
 * Frames are already encoded for the client, so the receiving server writes them as they are.
 */
import { Packr } from 'msgpackr';
import { describeError, gsfError } from '../errors.ts';

export const RecordKind = { send: 1, publish: 2, broadcast: 3, close: 4, group: 5, replaced: 6, control: 7 } as const;
export type RecordKindValue = (typeof RecordKind)[keyof typeof RecordKind];

/** Names of the kinds in log lines. */
export const KIND_NAMES: Record<number, string> = {
  1: 'send', 2: 'publish', 3: 'broadcast', 4: 'close', 5: 'group', 6: 'replaced', 7: 'control',
};

const HEADER = 5;
// moreTypes as the event codec (events/codec.ts): a payload an event can carry, a BigInt past
// 64 bits included, crosses to another server as it is.
const packr = new Packr({ useRecords: false, moreTypes: true });

/** A control message's bytes; throws what msgpackr throws for a value it cannot encode. */
export function packControl(message: ControlMessage): Uint8Array {
  return packr.pack(message);
}

/** A control message from its bytes; throws what msgpackr throws for bytes it cannot read back. */
export function unpackControl(bytes: Uint8Array): ControlMessage {
  return packr.unpack(bytes) as ControlMessage;
}

/**
 * A control message's bytes, or GSF_ERR_BAD_ARGUMENT naming why it cannot be encoded, or read
 * back: msgpack encodes a Map keyed by objects, which no server can decode, so the bytes are
 * read once here rather than found unreadable there (with the caller left to time out).
 */
export function encodeControl(message: ControlMessage): Uint8Array {
  const what = message.op === 'rs' ? 'answer' : 'arguments';
  let bytes: Uint8Array;
  try {
    bytes = packControl(message);
  } catch (err) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `the ${what} cannot be encoded for another server: ${describeError(err)}`);
  }
  try {
    unpackControl(bytes);
  } catch (err) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `the ${what} cannot be read back by another server (${describeError(err)}): `
      + "a Map's keys must be strings, numbers or booleans");
  }
  return bytes;
}

/** Control messages (record kind `control`). */
export type ControlMessage =
  | { op: 'rq'; id: number; from: string; method: string; args: unknown }
  | { op: 'rs'; id: number; ok: boolean; value?: unknown; error?: string }
  | { op: 'inv'; items: Array<[type: string, id: string, version: number]> };

/** Appends records to one growing buffer; `take()` hands the bytes over and starts afresh. */
export class RecordWriter {
  private buf = Buffer.allocUnsafe(64 * 1024);
  private pos = 0;

  get length(): number {
    return this.pos;
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  private header(kind: number, body: number): void {
    this.reserve(HEADER + body);
    this.buf[this.pos] = kind;
    this.buf.writeUInt32LE(body, this.pos + 1);
    this.pos += HEADER;
  }

  private bytes(b: Uint8Array | string): void {
    if (typeof b === 'string') this.pos += this.buf.write(b, this.pos, 'utf8');
    else {
      this.buf.set(b, this.pos);
      this.pos += b.byteLength;
    }
  }

  send(sessionId: number, frame: Uint8Array | string): void {
    const n = typeof frame === 'string' ? Buffer.byteLength(frame) : frame.byteLength;
    this.header(RecordKind.send, 8 + n);
    this.buf.writeDoubleLE(sessionId, this.pos);
    this.pos += 8;
    this.bytes(frame);
  }

  publish(group: string, json: Uint8Array, msgpack: Uint8Array): void {
    const g = Buffer.byteLength(group);
    this.header(RecordKind.publish, 2 + g + 4 + json.byteLength + msgpack.byteLength);
    this.buf.writeUInt16LE(g, this.pos);
    this.pos += 2;
    this.bytes(group);
    this.buf.writeUInt32LE(json.byteLength, this.pos);
    this.pos += 4;
    this.bytes(json);
    this.bytes(msgpack);
  }

  broadcast(json: Uint8Array, msgpack: Uint8Array): void {
    this.header(RecordKind.broadcast, 4 + json.byteLength + msgpack.byteLength);
    this.buf.writeUInt32LE(json.byteLength, this.pos);
    this.pos += 4;
    this.bytes(json);
    this.bytes(msgpack);
  }

  close(sessionId: number, code: number, reason: string): void {
    this.header(RecordKind.close, 10 + Buffer.byteLength(reason));
    this.buf.writeDoubleLE(sessionId, this.pos);
    this.buf.writeUInt16LE(code, this.pos + 8);
    this.pos += 10;
    this.bytes(reason);
  }

  group(sessionId: number, group: string, join: boolean): void {
    this.header(RecordKind.group, 9 + Buffer.byteLength(group));
    this.buf.writeDoubleLE(sessionId, this.pos);
    this.buf[this.pos + 8] = join ? 1 : 0;
    this.pos += 9;
    this.bytes(group);
  }

  /** A control message, encoded first (packControl). */
  control(body: Uint8Array): void {
    this.header(RecordKind.control, body.byteLength);
    this.bytes(body);
  }

  /** The bytes written since the last take, as one buffer of their own. */
  take(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.pos));
    this.pos = 0;
    return out;
  }
}

/** What applying a batch does on the receiving server. */
export interface RecordSink {
  /** Frames for one session, in order (a run of send records, grouped by session). */
  send(sessionId: number, frames: readonly Uint8Array[]): void;
  publish(group: string, json: Uint8Array, msgpack: Uint8Array): void;
  broadcast(json: Uint8Array, msgpack: Uint8Array): void;
  close(sessionId: number, code: number, reason: string): void;
  group(sessionId: number, group: string, join: boolean): void;
  replaced(sessionId: number, account: string): void;
  control(message: ControlMessage): void;
}

/**
 * Applies every record of a batch in order; returns how many there were. Throws on a corrupt
 * batch (after applying what came before the fault). A control record whose bytes cannot be
 * read back is told to `skipped`, and the records after it are applied.
 *
 * A run of send records is handed over per session, each session's frames in their order, so
 * the receiving server writes each session's frames under one cork (one system call) instead of
 * one write each. Any other record ends the run first: order per session holds throughout.
 */
export function applyRecords(data: Buffer, sink: RecordSink, skipped: (why: string) => void): number {
  const run = new Map<number, Uint8Array[]>();
  const flush = (): void => {
    for (const [sessionId, frames] of run) sink.send(sessionId, frames);
    run.clear();
  };
  try {
    return readRecords(data, sink, run, flush, skipped);
  } finally {
    flush();
  }
}

function readRecords(data: Buffer, sink: RecordSink, run: Map<number, Uint8Array[]>, flush: () => void, skipped: (why: string) => void): number {
  let pos = 0;
  let count = 0;
  while (pos < data.length) {
    if (pos + HEADER > data.length) throw new Error(`a record header is cut off at byte ${pos} of ${data.length}`);
    const kind = data[pos]!;
    const length = data.readUInt32LE(pos + 1);
    const at = pos + HEADER;
    const end = at + length;
    if (end > data.length) throw new Error(`a ${KIND_NAMES[kind] ?? kind} record of ${length} bytes is cut off at byte ${pos}`);
    pos = end;
    count++;
    if (kind === RecordKind.send) {
      const sessionId = data.readDoubleLE(at);
      const frames = run.get(sessionId);
      if (frames === undefined) run.set(sessionId, [data.subarray(at + 8, end)]);
      else frames.push(data.subarray(at + 8, end));
      continue;
    }
    flush();
    switch (kind) {
      case RecordKind.publish: {
        const g = data.readUInt16LE(at);
        const group = data.toString('utf8', at + 2, at + 2 + g);
        const j = data.readUInt32LE(at + 2 + g);
        const json = at + 6 + g;
        sink.publish(group, data.subarray(json, json + j), data.subarray(json + j, end));
        break;
      }
      case RecordKind.broadcast: {
        const j = data.readUInt32LE(at);
        sink.broadcast(data.subarray(at + 4, at + 4 + j), data.subarray(at + 4 + j, end));
        break;
      }
      case RecordKind.close:
        sink.close(data.readDoubleLE(at), data.readUInt16LE(at + 8), data.toString('utf8', at + 10, end));
        break;
      case RecordKind.group:
        sink.group(data.readDoubleLE(at), data.toString('utf8', at + 9, end), data[at + 8] === 1);
        break;
      case RecordKind.replaced: {
        const text = data.toString('utf8', at, end);
        const bar = text.indexOf('|');
        sink.replaced(Number(text.slice(0, bar)), text.slice(bar + 1));
        break;
      }
      case RecordKind.control: {
        // Its length is known: one that cannot be read back is skipped, and the records after it
        // are applied (a sender refuses such a message; this is for one that did not).
        let message: ControlMessage;
        try {
          message = unpackControl(data.subarray(at, end));
        } catch (err) {
          skipped(`a control record of ${length} bytes could not be decoded (${err instanceof Error ? err.message : String(err)})`);
          break;
        }
        sink.control(message);
        break;
      }
      default:
        throw new Error(`unknown record kind ${kind} at byte ${pos - length - HEADER}`);
    }
  }
  return count;
}

/** Splits a batch into (kind, bytes) pairs without applying it (message logging). */
export function* eachRecord(data: Buffer): Generator<{ kind: number; body: Buffer }> {
  let pos = 0;
  while (pos + HEADER <= data.length) {
    const kind = data[pos]!;
    const end = pos + HEADER + data.readUInt32LE(pos + 1);
    yield { kind, body: data.subarray(pos + HEADER, Math.min(end, data.length)) };
    pos = end;
  }
}
