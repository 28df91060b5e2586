/**
 * Carries out outbound operations (`Op` records from `ops.ts`) on the main thread's sockets.
 * A run of consecutive sends to one session is written under one cork: one write per run
 * instead of one per frame. A worker runs a tag's claimed events one after another, so a
 * session's replies in a batch come as one run.
 */
import type { CodecName } from './protocol.ts';
import { Op } from './outbound.ts';

/** What the session service offers to the operations. */
export interface OpTarget {
  send(sessionId: number, frame: string | Uint8Array): boolean;
  /** Writes the frames of the sends at `ops[start]`, `ops[start + 3]`, … before `end`, all to `sessionId`. */
  sendRun(sessionId: number, ops: unknown[], start: number, end: number): void;
  /**
   * Writes the text frames of the `sendText` operations at `ops[start]`, `ops[start + 3]`, …
   * before `end`, all to `sessionId`; the first begins at `text[pos]`. Returns the position after the last.
   */
  sendTextRun(sessionId: number, ops: unknown[], start: number, end: number, text: string, pos: number): number;
  sendAll(frameOf: (codec: CodecName) => string | Uint8Array): void;
  end(sessionId: number, code: number, reason: string): boolean;
  group(sessionId: number, group: string, join: boolean): void;
  publish(group: string, json: string | Uint8Array, msgpack: string | Uint8Array): void;
  readonly host: { log: { error(message: string): void } };
}

type Frame = string | Uint8Array;

/** Applies `ops`; the frames of `sendText` operations are consecutive slices of `text`. */
export function applyOps(target: OpTarget, ops: unknown[], text = ''): void {
  let pos = 0;
  for (let i = 0; i < ops.length;) {
    switch (ops[i]) {
      case Op.sendText: {
        const id = ops[i + 1] as number;
        let end = i + 3;
        while (ops[end] === Op.sendText && ops[end + 1] === id) end += 3;
        pos = target.sendTextRun(id, ops, i, end, text, pos);
        i = end;
        break;
      }
      case Op.send: {
        const id = ops[i + 1] as number;
        let end = i + 3;
        while (ops[end] === Op.send && ops[end + 1] === id) end += 3;
        if (end === i + 3) target.send(id, ops[i + 2] as Frame);
        else target.sendRun(id, ops, i, end);
        i = end;
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
