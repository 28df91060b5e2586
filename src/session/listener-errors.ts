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
