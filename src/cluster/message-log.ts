/**
 * `rpc_message_logging_level` lines (SPEC 2.3) for messages between servers, in the way
 * `session_message_logging_level` logs client messages: 1 writes each record's kind, its
 * target, the client message type and length; 2 also the whole record (frames as JSON). The
 * logger escapes what the text holds, so a client's text cannot start a line of its own.
 */
import { Unpackr } from 'msgpackr';
import { frameText } from '../session/codec.ts';
import { sessionCodec } from '../session/codec.ts';
import { KIND_NAMES, RecordKind } from './records.ts';

const unpackr = new Unpackr({ useRecords: false });

/** A description of one record: `kind=send, session=…, type=…, length=…[, message=…]`. */
export function describeRecord(kind: number, body: Uint8Array, level: number): string {
  const b = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const name = KIND_NAMES[kind] ?? String(kind);
  let target = '';
  let text = '';
  try {
    switch (kind) {
      case RecordKind.send: {
        const session = b.readDoubleLE(0);
        target = `session=${session}`;
        text = frameText(b.subarray(8), sessionCodec(session) === 'msgpack');
        break;
      }
      case RecordKind.publish: {
        const g = b.readUInt16LE(0);
        const j = b.readUInt32LE(2 + g);
        target = `group=${b.toString('utf8', 2, 2 + g)}`;
        text = b.toString('utf8', 6 + g, 6 + g + j);
        break;
      }
      case RecordKind.broadcast:
        target = 'sessions=all';
        text = b.toString('utf8', 4, 4 + b.readUInt32LE(0));
        break;
      case RecordKind.close:
        target = `session=${b.readDoubleLE(0)}`;
        text = JSON.stringify({ code: b.readUInt16LE(8), reason: b.toString('utf8', 10) });
        break;
      case RecordKind.group:
        target = `session=${b.readDoubleLE(0)}`;
        text = JSON.stringify({ group: b.toString('utf8', 9), join: b[8] === 1 });
        break;
      case RecordKind.replaced:
        text = JSON.stringify(b.toString('utf8'));
        break;
      case RecordKind.control: {
        const m = unpackr.unpack(b) as { op: string; method?: string };
        target = m.method !== undefined ? `op=${m.op}, method=${m.method}` : `op=${m.op}`;
        text = JSON.stringify(m);
        break;
      }
    }
  } catch {
    text = `<${body.byteLength} bytes that do not decode>`;
  }
  const type = /^\{"type":"((?:[^"\\]|\\.)*)"/.exec(text)?.[1];
  const parts = [`kind=${name}`];
  if (target) parts.push(target);
  if (type !== undefined) parts.push(`type=${type}`);
  parts.push(`length=${body.byteLength}`);
  if (level >= 2) parts.push(`message=${text}`);
  return parts.join(', ');
}
