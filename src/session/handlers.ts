/**
 * Session handlers of one thread: plugins' message, opened and closed handlers, and the three
 * engine events that run them on event workers:
 * - `_session.message` (network events, session tag): decodes the raw frame, checks the
 *   envelope, runs the handler for its type; bad input is answered with an `_error` frame;
 * - `_session.opened` / `_session.closed` (engine events, session tag): run every plugin's
 *   opened or closed handler, in plugin order.
 */
import type { EventRuntime } from '../events/runtime.ts';
import type { EventContext, NetworkFrame } from '../events/types.ts';
import { DecodeError, decodeCanonicalJson, decodeFrame, sessionCodec } from './codec.ts';
import { EngineType, ProtocolError, type ProtocolErrorBody } from './protocol.ts';
import { gsfError } from '../errors.ts';
import { sessionOps, type SessionOps } from './ops.ts';
import type { MessageHandler, SessionClosedInfo, SessionHandler, SessionOpenedInfo, SessionMessage } from './types.ts';

// Module bindings are getters under the CommonJS transform event workers load with: the ones
// used per message are read once.
const decode = decodeFrame, decodeCanonical = decodeCanonicalJson, codecOf = sessionCodec, DecodeFailure = DecodeError;

export const MESSAGE_EVENT = '_session.message';
export const OPENED_EVENT = '_session.opened';
export const CLOSED_EVENT = '_session.closed';

/** A handler that takes the client's raw frame and decodes it itself (native plugins). */
export type RawMessageHandler = (frame: NetworkFrame, ctx: EventContext) => void;

/** A message type's handler; `raw` ones (native plugins) take the frame instead of `fn`. */
export interface MessageEntry {
  plugin: string;
  fn: MessageHandler;
  raw?: RawMessageHandler;
}

export interface SessionHandlers {
  messages: Map<string, MessageEntry>;
  opened: Array<{ plugin: string; fn: SessionHandler<SessionOpenedInfo> }>;
  closed: Array<{ plugin: string; fn: SessionHandler<SessionClosedInfo> }>;
}

const registries = new WeakMap<EventRuntime, SessionHandlers>();

/** The session handlers of a thread's runtime; the first call registers the engine events. */
export function sessionHandlers(rt: EventRuntime): SessionHandlers {
  let reg = registries.get(rt);
  if (reg) return reg;
  const handlers: SessionHandlers = reg = { messages: new Map(), opened: [], closed: [] };
  registries.set(rt, reg);
  const ops = sessionOps(rt);
  rt.addHandler('gsf', MESSAGE_EVENT, ((frame: NetworkFrame, ctx: EventContext) => runMessage(handlers, ops, frame, ctx)) as never);
  rt.addHandler('gsf', OPENED_EVENT, ((info: SessionOpenedInfo, ctx: EventContext) => runAll(handlers.opened, info, ctx, 'opened')) as never);
  rt.addHandler('gsf', CLOSED_EVENT, ((info: SessionClosedInfo, ctx: EventContext) => runAll(handlers.closed, info, ctx, 'closed')) as never);
  return reg;
}

/** Registers a raw-frame handler of `type`, under the same one-plugin-per-type rule as onMessage. */
export function addRawMessageHandler(rt: EventRuntime, plugin: string, type: string, raw: RawMessageHandler): void {
  const handlers = sessionHandlers(rt);
  const owner = handlers.messages.get(type);
  if (owner) throw gsfError('GSF_ERR_PLUGIN_DUPLICATE', plugin, 'message type', type, owner.plugin);
  handlers.messages.set(type, { plugin, fn: () => undefined, raw });
}

/** The message a handler receives besides its body: who sent it and how to answer. */
class Message implements SessionMessage {
  constructor(private readonly ops: SessionOps, readonly sessionId: number, readonly type: string, readonly id: number | undefined) {}

  reply(body?: unknown, type?: string): void {
    this.ops.sendTo(this.sessionId, type ?? this.type, body, this.id);
  }
}

function sendError(ops: SessionOps, sessionId: number, body: ProtocolErrorBody, id: number | undefined): void {
  ops.sendTo(sessionId, EngineType.error, body, id);
}

/** The last message type found and its handler: a batch's messages mostly share a type. */
let lastHandlers: SessionHandlers | null = null;
let lastType = '';
let lastEntry: MessageEntry | undefined;

function runMessage(handlers: SessionHandlers, ops: SessionOps, frame: NetworkFrame, ctx: EventContext): void | Promise<void> {
  const sessionId = ctx.sessionId ?? 0;
  // A raw handler decodes the frame itself; the main thread named the event after its type.
  const raw = ctx.name !== MESSAGE_EVENT ? handlers.messages.get(ctx.name)?.raw : undefined;
  if (raw !== undefined) return raw(frame, ctx);
  let envelope;
  try {
    // The frame is in the worker's claim buffer: decode before anything else. An event named
    // after its type is a frame whose type the main thread matched in the canonical form.
    const codec = codecOf(sessionId);
    envelope = (codec === 'json' && ctx.name !== MESSAGE_EVENT && decodeCanonical(frame, ctx.name))
      || decode(frame.bytes.subarray(frame.start, frame.end), codec);
  } catch (err) {
    if (!(err instanceof DecodeFailure)) throw err;
    const body: ProtocolErrorBody = { code: err.code, message: err.message };
    if (err.type !== undefined) body.type = err.type;
    sendError(ops, sessionId, body, undefined);
    return;
  }
  const { type, id } = envelope;
  let entry = lastEntry;
  if (type !== lastType || handlers !== lastHandlers) {
    entry = type.startsWith('_') ? undefined : handlers.messages.get(type);
    // Entries are never replaced once registered: only found ones are remembered.
    if (entry !== undefined) {
      lastHandlers = handlers;
      lastType = type;
      lastEntry = entry;
    }
  }
  if (entry === undefined) {
    sendError(ops, sessionId, { code: ProtocolError.unknownType, message: `no handler for message type '${type}'`, type }, id);
    return;
  }
  if (entry.raw !== undefined) return entry.raw(frame, ctx);
  if (ctx.name !== type) ctx.setEventName(type);
  let result: void | Promise<void>;
  try {
    result = entry.fn(envelope.body, new Message(ops, sessionId, type, id), ctx);
  } catch (err) {
    return handlerFailed(ops, sessionId, entry.plugin, type, id, err);
  }
  if (result instanceof Promise) return result.catch((err: unknown) => handlerFailed(ops, sessionId, entry.plugin, type, id, err));
  return undefined;
}

/** Tells the client its request failed, then throws for the worker to log (with the cause). */
function handlerFailed(ops: SessionOps, sessionId: number, plugin: string, type: string, id: number | undefined, err: unknown): never {
  sendError(ops, sessionId, { code: ProtocolError.handlerFailed, message: `the handler of '${type}' failed`, type }, id);
  throw new Error(`plugin '${plugin}' message handler '${type}' failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

async function runAll<I>(list: Array<{ plugin: string; fn: SessionHandler<I> }>, info: I, ctx: EventContext, what: string): Promise<void> {
  const errors: unknown[] = [];
  for (const { plugin, fn } of list) {
    try {
      await fn(info, ctx);
    } catch (err) {
      errors.push(new Error(`plugin '${plugin}' session-${what} handler failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err }));
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} session-${what} handlers failed`);
}
