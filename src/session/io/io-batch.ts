/**
 * What the main thread hands an I/O thread for its sessions (`SessionService.io_threads_size` > 1):
 * the frames, closes and broadcasts of one event-loop turn, packed in order into one buffer and
 * posted once (transferred, not copied). The I/O thread applies them in the same order.
 *
 * Record: op (u8), flags (u8), 2 spare bytes, then per op:
 * - send: session id (f64), frame length (u32), frame;
 * - close: session id (f64), code (u32), reason length (u32), reason (UTF-8);
 * - ids: json length, msgpack length, id count (u32 each), json, msgpack, padding to 8, ids (f64);
 * - all: json length, msgpack length (u32 each), json, msgpack.
 */

export const enum IoOp { send = 1, close = 2, ids = 3, all = 4 }
export const IO_BINARY = 1;
/** An `ids` record of a group's members: one that closed here since is no drop (it has left the group). */
export const IO_MEMBERS = 2;

const utf8 = new TextEncoder();
const INITIAL_BYTES = 64 * 1024;

/** Packs one turn's operations for one I/O thread. */
export class IoBatchWriter {
  private bytes = new Uint8Array(INITIAL_BYTES);
  private view = new DataView(this.bytes.buffer);
  private used = 0;

  get empty(): boolean {
    return this.used === 0;
  }

  /** The packed records (the buffer is handed over: a fresh one is started). */
  take(): ArrayBuffer {
    const out = this.bytes.buffer.slice(0, this.used) as ArrayBuffer;
    this.used = 0;
    return out;
  }

  private room(n: number): void {
    const need = this.used + n + 8;
    if (need <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.bytes.subarray(0, this.used));
    this.bytes = next;
    this.view = new DataView(next.buffer);
  }

  private head(op: IoOp, flags: number): void {
    this.bytes[this.used] = op;
    this.bytes[this.used + 1] = flags;
    this.used += 4;
  }

  private align(): void {
    this.used = (this.used + 7) & ~7;
  }

  send(sessionId: number, frame: Uint8Array | string, binary: boolean): void {
    const data = typeof frame === 'string' ? utf8.encode(frame) : frame;
    this.room(24 + data.length);
    this.align();
    this.head(IoOp.send, binary ? IO_BINARY : 0);
    this.view.setFloat64(this.used, sessionId, true);
    this.view.setUint32(this.used + 8, data.length, true);
    this.bytes.set(data, this.used + 12);
    this.used += 12 + data.length;
  }

  close(sessionId: number, code: number, reason: string): void {
    const text = utf8.encode(reason);
    this.room(28 + text.length);
    this.align();
    this.head(IoOp.close, 0);
    this.view.setFloat64(this.used, sessionId, true);
    this.view.setUint32(this.used + 8, code, true);
    this.view.setUint32(this.used + 12, text.length, true);
    this.bytes.set(text, this.used + 16);
    this.used += 16 + text.length;
  }

  /** One message to some sessions of the thread, each in its codec's encoding; `members`: a group's (see IO_MEMBERS). */
  ids(sessionIds: readonly number[], json: Uint8Array, msgpack: Uint8Array, members = false): void {
    this.room(32 + json.length + msgpack.length + sessionIds.length * 8);
    this.align();
    this.head(IoOp.ids, members ? IO_MEMBERS : 0);
    const v = this.view;
    v.setUint32(this.used, json.length, true);
    v.setUint32(this.used + 4, msgpack.length, true);
    v.setUint32(this.used + 8, sessionIds.length, true);
    this.used += 12;
    this.bytes.set(json, this.used);
    this.bytes.set(msgpack, this.used + json.length);
    this.used += json.length + msgpack.length;
    this.align();
    for (const id of sessionIds) {
      v.setFloat64(this.used, id, true);
      this.used += 8;
    }
  }

  /** One message to every session of the thread. */
  all(json: Uint8Array, msgpack: Uint8Array): void {
    this.room(16 + json.length + msgpack.length);
    this.align();
    this.head(IoOp.all, 0);
    this.view.setUint32(this.used, json.length, true);
    this.view.setUint32(this.used + 4, msgpack.length, true);
    this.used += 8;
    this.bytes.set(json, this.used);
    this.bytes.set(msgpack, this.used + json.length);
    this.used += json.length + msgpack.length;
  }
}

/** What applying a batch does on the I/O thread (its listener). */
export interface IoBatchTarget {
  sendOne(sessionId: number, frame: Uint8Array, binary: boolean): void;
  sendRun(sessionId: number, frames: (write: (frame: Uint8Array, binary: boolean) => void) => void): void;
  end(sessionId: number, code: number, reason: string): boolean;
  broadcast(sessionIds: readonly number[] | null, json: Uint8Array, msgpack: Uint8Array, members?: boolean): void;
}

const decoder = new TextDecoder();

/** Applies a packed batch in order; a run of sends to one session is written under one cork (a single send without one). */
export function applyIoBatch(buffer: ArrayBuffer, target: IoBatchTarget): void {
  const bytes = new Uint8Array(buffer);
  const v = new DataView(buffer);
  const end = bytes.length;
  let p = 0;
  while (p < end) {
    p = (p + 7) & ~7;
    const op = bytes[p];
    const flags = bytes[p + 1]!;
    p += 4;
    switch (op) {
      case IoOp.send: {
        const id = v.getFloat64(p, true);
        const first = v.getUint32(p + 8, true);
        const q0 = (p + 12 + first + 7) & ~7;
        if (q0 >= end || bytes[q0] !== IoOp.send || v.getFloat64(q0 + 4, true) !== id) {
          // A run of one: no cork needed.
          target.sendOne(id, bytes.subarray(p + 12, p + 12 + first), (flags & IO_BINARY) !== 0);
          p += 12 + first;
          break;
        }
        target.sendRun(id, (write) => {
          write(bytes.subarray(p + 12, p + 12 + first), (flags & IO_BINARY) !== 0);
          p += 12 + first;
          let length: number;
          // The same session's next frames go under the same cork.
          for (let q = (p + 7) & ~7; q < end && bytes[q] === IoOp.send && v.getFloat64(q + 4, true) === id; q = (p + 7) & ~7) {
            length = v.getUint32(q + 12, true);
            write(bytes.subarray(q + 16, q + 16 + length), (bytes[q + 1]! & IO_BINARY) !== 0);
            p = q + 16 + length;
          }
        });
        break;
      }
      case IoOp.close: {
        const length = v.getUint32(p + 12, true);
        target.end(v.getFloat64(p, true), v.getUint32(p + 8, true), decoder.decode(bytes.subarray(p + 16, p + 16 + length)));
        p += 16 + length;
        break;
      }
      case IoOp.ids: {
        const jl = v.getUint32(p, true), ml = v.getUint32(p + 4, true), count = v.getUint32(p + 8, true);
        p += 12;
        const json = bytes.subarray(p, p + jl);
        const msgpack = bytes.subarray(p + jl, p + jl + ml);
        p = (p + jl + ml + 7) & ~7;
        const ids = new Array<number>(count);
        for (let i = 0; i < count; i++) ids[i] = v.getFloat64(p + i * 8, true);
        p += count * 8;
        target.broadcast(ids, json, msgpack, (flags & IO_MEMBERS) !== 0);
        break;
      }
      case IoOp.all: {
        const jl = v.getUint32(p, true), ml = v.getUint32(p + 4, true);
        p += 8;
        target.broadcast(null, bytes.subarray(p, p + jl), bytes.subarray(p + jl, p + jl + ml));
        p += jl + ml;
        break;
      }
      default:
        throw new Error(`session I/O batch: unknown record ${String(op)} at ${p - 4}`);
    }
  }
}
