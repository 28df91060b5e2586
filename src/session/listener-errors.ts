/**
 * The error frames the session listener (`listener.ts`) answers a client frame with on its own
 * thread, without an event worker: a frame of a message type no plugin handles, and any frame
 * while no plugin handles a message type at all. Rare paths: the listener sends what these
 * return through its usual protocol-error path (counted, backpressure rule included).
 */
import { DecodeError, decodeFrame } from './codec.ts';
import { ProtocolError, protocolErrorBody, type CodecName, type ProtocolErrorBody } from './protocol.ts';

/** An error frame's body, and the id of the client's frame it answers (if it had one). */
export interface ProtocolErrorAnswer {
  body: ProtocolErrorBody;
  id?: number;
}

/** A frame of type `type`, which no plugin handles. */
export function unknownTypeAnswer(bytes: Uint8Array, codec: CodecName, type: string): ProtocolErrorAnswer {
  let id: number | undefined;
  try {
    id = decodeFrame(bytes, codec).id;
  } catch {
    id = undefined; // the error frame for the unknown type is what the client needs first
  }
  return { body: protocolErrorBody(ProtocolError.unknownType, [type], type), id };
}

/** No plugin handles any message type: the frame's decode error, or else its unknown type. */
export function answerWithoutWorker(bytes: Uint8Array, codec: CodecName): ProtocolErrorAnswer {
  try {
    const { type, id } = decodeFrame(bytes, codec);
    return { body: protocolErrorBody(ProtocolError.unknownType, [type], type), id };
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    const body: ProtocolErrorBody = { code: err.code, message: err.message };
    if (err.type !== undefined) body.type = err.type;
    return { body, id: err.id };
  }
}

/**
 * The id of a frame too big to decode, when it ends the frame as the SDK writes it (`…,"id":7}`
 * in JSON; a msgpack map's last entry `id`: n), so that the error frame answers its request;
 * else undefined. Only the last bytes are read.
 */
export function trailingId(bytes: Uint8Array, binary: boolean): number | undefined {
  const end = bytes.length;
  if (!binary) {
    const tail = Buffer.from(bytes.buffer, bytes.byteOffset + Math.max(0, end - 32), Math.min(32, end)).toString('latin1');
    const m = /,"id":(\d{1,16})\}\s*$/.exec(tail);
    const id = m ? Number(m[1]) : NaN;
    return Number.isSafeInteger(id) ? id : undefined;
  }
  for (const length of [1, 2, 3, 5, 9]) {
    const at = end - length;
    if (at < 3 || bytes[at - 3] !== 0xa2 || bytes[at - 2] !== 0x69 || bytes[at - 1] !== 0x64) continue;
    const head = bytes[at]!;
    const view = new DataView(bytes.buffer, bytes.byteOffset + at + 1, length - 1);
    let id: number | undefined;
    if (length === 1 && head <= 0x7f) id = head;
    else if (length === 2 && head === 0xcc) id = view.getUint8(0);
    else if (length === 3 && head === 0xcd) id = view.getUint16(0);
    else if (length === 5 && head === 0xce) id = view.getUint32(0);
    else if (length === 9 && head === 0xcf) id = Number(view.getBigUint64(0));
    if (id !== undefined && Number.isSafeInteger(id)) return id;
  }
  return undefined;
}
