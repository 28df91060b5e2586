/** What a session listener on an I/O thread (`src/session/io/thread.ts`) is told to do differently. */
import type { CodecName } from '../protocol.ts';
import type { SessionStats } from '../listener-types.ts';

export interface IoRole {
  /** The id of a new session: its low bits name the codec and this thread, so the main thread routes without a lookup. */
  sessionId(codec: CodecName): number;
  /** A session opened here (told to the main thread before any of its events is queued). */
  opened(sessionId: number): void;
  /** A session closed here; its messages are already queued. */
  closed(sessionId: number, code: number, reason: string): void;
  /** Re-reads the flags if they changed (logging level, client versions). */
  refresh(): void;
  /** The counts, in memory the main thread reads. */
  stats: SessionStats;
}
