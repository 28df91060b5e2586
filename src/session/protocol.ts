/**
 * The client protocol: URL parameters, the envelope, engine message types, protocol error
 * codes and close codes. Shared by the server (`src/session/`) and the client SDK
 * (`src/sdk/`), so this module imports nothing from Node.
 *
 * Client URL: `ws://HOST:PORT/?version=<client version>&codec=json|msgpack`.
 * Envelope: `{"type": string, "body": any, "id"?: integer}` — JSON in text frames, msgpack in
 * binary frames. `id` is optional: a client that sets it gets the reply (or error frame) to that
 * message with the same `id`, which is how the SDK correlates requests and responses.
 */

import { ErrorTable, format, ProtocolErrorCodes } from '../errors.ts';
import { wellFormed } from '../text.ts';

/** The two codecs a client can pick at connect time. */
export type CodecName = 'json' | 'msgpack';
export const CODECS: readonly CodecName[] = ['json', 'msgpack'];

/** One message in either direction. */
export interface Envelope<B = unknown> {
  type: string;
  body: B;
  /** Request id chosen by the client, echoed in the reply. */
  id?: number;
}

/** Message types the engine sends; clients may not send types starting with `_`. */
export const EngineType = {
  /** A protocol error; body: `ProtocolErrorBody`. */
  error: '_error',
  /** Maintenance is on; body: `MaintenanceNotice` (sent on change and to every new session). */
  maintenance: '_maintenance',
  /** Maintenance ended; body: `MaintenanceNotice` with `under_maintenance: false`. */
  maintenanceEnd: '_maintenance_end',
} as const;

/** Body of a `_maintenance` or `_maintenance_end` message. */
export interface MaintenanceNotice {
  under_maintenance: boolean;
  date_start: string;
  date_end: string;
  messages: string;
}

/**
 * Protocol error codes carried in `_error` frames. The session stays open after each of
 * them; the offending message is dropped. Defined in gsf's one error table (`src/errors.ts`).
 */
export const ProtocolError = ProtocolErrorCodes;
export type ProtocolErrorCode = (typeof ProtocolError)[keyof typeof ProtocolError];

/** Body of an `_error` frame. */
export interface ProtocolErrorBody {
  code: ProtocolErrorCode;
  message: string;
  /** The offending message's type, when it could be read. */
  type?: string;
}

/** The body of an `_error` frame for `code`, its message filled from the error table's template. */
export function protocolErrorBody(code: ProtocolErrorCode, args: readonly unknown[], type?: string): ProtocolErrorBody {
  const message = format(ErrorTable[code].message, args);
  return type === undefined ? { code, message } : { code, message, type };
}

/**
 * WebSocket close codes the server uses (4000–4999 is the application range). 1001 is sent
 * when the server stops; 1006 (no close frame) is what a client sees after an idle timeout.
 */
export const CloseCode = {
  /** The server is stopping. */
  goingAway: 1001,
  /** The client's version is neither current nor compatible; the reason names the required version. */
  versionRefused: 4001,
  /** The `codec` URL parameter is missing or unknown. */
  badCodec: 4002,
  /** The client did not read fast enough: its send buffer passed `max_backpressure_bytes`. */
  backpressure: 4008,
  /** The session's account logged in from another session (`account_login_policy: "replace"`). */
  replaced: 4009,
  /** A plugin closed the session; the reason is the plugin's. */
  closedByServer: 4010,
  /** An event of this session timed out and `close_session_when_event_timeout` is on. */
  eventTimeout: 4011,
} as const;

/** Code points of a refused client version the close reason shows. */
const SHOWN_VERSION = 24;

/** The close reason of a version refusal (names the required version). */
export function versionRefusedReason(version: string, required: string, compatible: readonly string[]): string {
  const also = compatible.length > 0 ? ` (also accepted: ${compatible.join(', ')})` : '';
  // The client's own version is cut short, so that the version it needs fits in the 123 bytes.
  const points = Array.from(version);
  const shown = points.length > SHOWN_VERSION ? `${points.slice(0, SHOWN_VERSION).join('')}…` : version;
  return `client version '${shown}' is not accepted; required version: ${required}${also}`;
}

// TextEncoder, not Buffer: the client SDK (browsers too) closes with the same cut.
const utf8 = new TextEncoder();

/** The UTF-8 length of code point `cp`. */
const utf8Length = (cp: number): number => (cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);

/**
 * A close reason as a close frame carries it (server and client SDK): UTF-8 text of at most 123
 * bytes, cut after the last whole character that fits. An unpaired surrogate (text with no UTF-8
 * form) is sent as U+FFFD: the frame must be valid UTF-8, or a client fails the connection (1006)
 * and never sees the code.
 */
export function closeReason(text: string): string {
  const s = wellFormed(text);
  // 41 UTF-16 units are at most 123 bytes (3 per unit at most).
  if (s.length <= 41 || utf8.encode(s).length <= 123) return s;
  let bytes = 0;
  let end = 0;
  for (const ch of s) {
    bytes += utf8Length(ch.codePointAt(0)!);
    if (bytes > 123) break;
    end += ch.length;
  }
  return s.slice(0, end);
}
