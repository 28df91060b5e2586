/**
 * `session_message_logging_level` lines (SPEC 2.3): 1 logs each client message's type and
 * length, 2 also the whole message.
 */
import { frameText } from './codec.ts';

export function logSessionMessage(log: { info(message: string): void }, level: number, direction: 'in' | 'out',
  sessionId: number, frame: string | Uint8Array, binary: boolean): void {
  const length = typeof frame === 'string' ? Buffer.byteLength(frame) : frame.byteLength;
  const text = frameText(frame, binary);
  const type = /^\{"type":"((?:[^"\\]|\\.)*)"/.exec(text)?.[1] ?? '?';
  if (level >= 2) {
    log.info(`session message ${direction}: session=${sessionId}, type=${type}, length=${length}, message=${text}`);
  } else {
    log.info(`session message ${direction}: session=${sessionId}, type=${type}, length=${length}`);
  }
}
