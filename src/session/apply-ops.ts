/**
 * Carries out outbound operations (`Op` records from `ops.ts`) on the main thread's sockets.
 * Consecutive sends are grouped per session and written under one cork each: one write per
 * session per batch instead of one per frame.
 */
import type { CodecName } from './protocol.ts';
import { Op } from './outbound.ts';

/** What the session service offers to the operations. */
export interface OpTarget {
  send(sessionId: number, frame: string | Uint8Array): boolean;
  sendMany(sessionId: number, frames: Array<string | Uint8Array>): void;
  sendAll(frameOf: (codec: CodecName) => string | Uint8Array): void;
  end(sessionId: number, code: number, reason: string): boolean;
  group(sessionId: number, group: string, join: boolean): void;
  publish(group: string, json: string | Uint8Array, msgpack: string | Uint8Array): void;
  readonly host: { log: { error(message: string): void } };
}

type Frame = string | Uint8Array;

export function applyOps(target: OpTarget, ops: unknown[]): void {
  for (let i = 0; i < ops.length;) {
    switch (ops[i]) {
      case Op.send: {
        if (ops[i + 3] !== Op.send) {
          target.send(ops[i + 1] as number, ops[i + 2] as Frame);
          i += 3;
          break;
        }
        const groups = new Map<number, Frame[]>();
        for (; ops[i] === Op.send; i += 3) {
          const id = ops[i + 1] as number;
          const list = groups.get(id);
          if (list) list.push(ops[i + 2] as Frame);
          else groups.set(id, [ops[i + 2] as Frame]);
        }
        for (const [id, frames] of groups) target.sendMany(id, frames);
        break;
      }
      case Op.broadcast: {
        const json = ops[i + 1] as Frame | null;
        const msgpack = ops[i + 2] as Frame | null;
        const ids = ops[i + 3] as number[] | null;
        const pick = (codec: CodecName): Frame => (codec === 'json' ? json : msgpack)!;
        if (ids === null) target.sendAll(pick);
        else for (const id of ids) target.send(id, pick(id % 2 === 1 ? 'msgpack' : 'json'));
        i += 4;
        break;
      }
      case Op.close:
        target.end(ops[i + 1] as number, ops[i + 2] as number, ops[i + 3] as string);
        i += 4;
        break;
      case Op.join:
      case Op.leave:
        target.group(ops[i + 1] as number, ops[i + 2] as string, ops[i] === Op.join);
        i += 3;
        break;
      case Op.publish:
        target.publish(ops[i + 1] as string, ops[i + 2] as Frame, ops[i + 3] as Frame);
        i += 4;
        break;
      default:
        target.host.log.error(`session outbound: unknown operation ${String(ops[i])}; rest of the batch dropped`);
        return;
    }
  }
}
