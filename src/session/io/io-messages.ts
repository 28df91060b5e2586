/** What the main thread and a session I/O thread tell each other (`thread.ts`, `../main/io-sessions.ts`). */
import type { MessagePort } from 'node:worker_threads';
import type { ComponentArgs } from '../../config/manifest.ts';
import type { SessionServiceOptions } from '../listener-types.ts';

/** The message types plugins handle, and whether any plugin hears opens and closes. */
export interface HandledTypes {
  messages: string[];
  opened: number;
  closed: number;
}

/**
 * Cells shared by the main thread and one I/O thread: `busy` is 1 from a batch's post until the
 * thread has applied it; `held` is 1 when the main thread kept a batch back meanwhile (the
 * thread then notes `drained`).
 */
export const enum IoControl { busy = 0, held = 1 }
export const IO_CONTROL_CELLS = 2;

export interface IoInit {
  control: SharedArrayBuffer;
  entry: string;
  index: number;
  components: Record<string, ComponentArgs>;
  logFile: string;
  logFormat: 'text' | 'json';
  options: SessionServiceOptions;
  /** The port every I/O thread listens on (chosen by the main thread when the manifest says 0). */
  listenPort: number;
  stats: SharedArrayBuffer;
  handled: HandledTypes;
  /** The maintenance frames if maintenance is on at the thread's start. */
  maintenance: { json: string | Uint8Array; msgpack: string | Uint8Array } | null;
  /** The thread's notes to the main thread (`IoNote`): a port of its own, so the main thread can read it synchronously. */
  notes: MessagePort;
}

/** One frame in each codec's encoding. */
export interface CodecFrames { json: string | Uint8Array; msgpack: string | Uint8Array }

/** Main thread → I/O thread (`worker.postMessage`). */
export type IoCommand =
  | { kind: 'batch'; buffer: ArrayBuffer }
  | { kind: 'types'; handled: HandledTypes }
  /** The gate's frames, and what every session gets now (`announce`), in one step on the thread. */
  | { kind: 'maintenance'; json: string | Uint8Array; msgpack: string | Uint8Array; announce: CodecFrames | null }
  | { kind: 'maintenance-off'; announce: CodecFrames | null }
  | { kind: 'shutdown' };

/** I/O thread → main thread (`IoInit.notes`). */
export type IoNote =
  | { kind: 'listening'; port: number }
  | { kind: 'failed'; message: string }
  | { kind: 'opened'; id: number }
  | { kind: 'closed'; id: number; code: number; reason: string }
  | { kind: 'stopped' }
  /** The thread applied its batch and the main thread held one back meanwhile: post it now. */
  | { kind: 'drained' };
