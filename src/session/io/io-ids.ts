/**
 * Session ids on I/O threads: bit 0 is the codec (as everywhere, see `withCodecBit`), bits 1 to 6
 * the I/O thread that owns the session, so the main thread routes a frame by its id alone.
 */
import type { CodecName } from '../protocol.ts';

/** Most I/O threads a server may run (bits 1 to 6 of a session id). */
export const MAX_IO_THREADS = 64;

/** A session id from a random tag (>= 2^32), owned by I/O thread `thread`. */
export function ioSessionId(random: number, thread: number, codec: CodecName): number {
  return random - (random % 128) + thread * 2 + (codec === 'msgpack' ? 1 : 0);
}

/** The I/O thread a session id names (valid only for ids of this server's I/O threads). */
export function ioThreadOf(sessionId: number): number {
  return Math.floor(sessionId / 2) % MAX_IO_THREADS;
}
