/**
 * The worker side of a client message. Session handlers of one thread: plugins' message,
 * opened and closed handlers, and the three engine events that run them on event workers:
 * - `_session.message` (network events, session tag): decodes the raw frame, checks the
 *   envelope, runs the handler for its type; bad input is answered with an `_error` frame;
 * - `_session.refused` (network events, session tag, the same handler): the error frame the
 *   listener's thread made for a frame it refused (too big, wrong kind, unknown type), sent
 *   in its turn among the session's replies;
 * - `_session.unanswered` (network events, session tag, the same handler): a client frame whose
 *   event will never finish (it timed out, was cancelled behind one that did, or was abandoned
 *   or lost with its ended thread), after a byte saying which: answered with its `_error` frame;
 * - `_session.opened` / `_session.closed` (engine events, session tag): run every plugin's
 *   opened or closed handler, in plugin order.
 */
import { checkType, encodeFailure } from '../plugin-checks.ts';
import { isAsyncFunction, type EventRuntime, type RunningEvent } from '../../events/runtime.ts';
import { PluginError, gsfError } from '../../errors.ts';
import type { EventContext, NetworkFrame } from '../../events/types.ts';
import { DecodeError, decodeCanonicalJson, decodeCanonicalMsgpack, decodeFrame, decodeMsgpackFrame, sessionCodec } from '../codec.ts';
import { EngineType, ProtocolError, protocolErrorBody, type ProtocolErrorBody } from '../protocol.ts';
import { sessionOps, type SessionOps } from '../ops.ts';
import type { MessageHandler, SessionClosedInfo, SessionHandler, SessionOpenedInfo, SessionMessage } from '../types.ts';
import { dropSent } from '../../events/drop-sent.ts';

// Module bindings are getters under the CommonJS transform event workers load with: the ones
// used per message are read once.
const decode = decodeFrame, decodeCanonical = decodeCanonicalJson, decodeMsgpack = decodeMsgpackFrame;
const decodeCanonicalPacked = decodeCanonicalMsgpack;
const codecOf = sessionCodec, DecodeFailure = DecodeError;
const textDecoder = new TextDecoder();

export const MESSAGE_EVENT = '_session.message';
export const REFUSED_EVENT = '_session.refused';
export const UNANSWERED_EVENT = '_session.unanswered';

/** Why a message went unanswered: the first byte of an `_session.unanswered` event's payload (TagQueue::AnswerWhy). */
export const Unanswered = { timedOut: 0, cancelled: 1, abandoned: 2, lost: 3 } as const;
const DROPPED_BECAUSE = ['', 'an earlier message of this session timed out', 'its event thread was ended while its handler awaited',
  'its event thread exited while its handler ran'];
export const OPENED_EVENT = '_session.opened';
export const CLOSED_EVENT = '_session.closed';

/** A handler that takes the client's raw frame and decodes it itself (native plugins). */
export type RawMessageHandler = (frame: NetworkFrame, ctx: EventContext) => void;

/** A plugin's handler of one message type; `raw` ones (native plugins) take the frame instead of `fn`. */
export interface MessageEntry {
  plugin: string;
  fn: MessageHandler;
  /** An `async function` (runs in its event's async context). */
  async: boolean;
  raw?: RawMessageHandler;
}

/** Registers a message handler entry (the plugin API checks names and duplicates first). */
export function messageEntry(plugin: string, fn: MessageHandler): MessageEntry {
  return { plugin, fn, async: isAsyncFunction(fn) };
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
  rt.addHandler('gsf', MESSAGE_EVENT, ((frame: NetworkFrame, ctx: RunningEvent) => runMessage(rt, handlers, ops, frame, ctx)) as never);
  rt.addHandler('gsf', OPENED_EVENT, ((info: SessionOpenedInfo, ctx: RunningEvent) => runHandlers(rt, handlers.opened, info, ctx, 'opened')) as never);
  rt.addHandler('gsf', CLOSED_EVENT, ((info: SessionClosedInfo, ctx: RunningEvent) => runHandlers(rt, handlers.closed, info, ctx, 'closed')) as never);
  return reg;
}

/** Registers a raw-frame handler of `type`, under the same one-plugin-per-type rule as onMessage. */
export function addRawMessageHandler(rt: EventRuntime, plugin: string, type: string, raw: RawMessageHandler): void {
  const handlers = sessionHandlers(rt);
  const owner = handlers.messages.get(type);
  if (owner) throw gsfError('GSF_ERR_PLUGIN_DUPLICATE', plugin, 'message type', type, owner.plugin);
  handlers.messages.set(type, { plugin, fn: () => undefined, async: false, raw });
}

/** The message a handler receives besides its body: who sent it and how to answer. */
class Message implements SessionMessage {
  /** A reply was sent: a failure after it is logged, not answered a second time. */
  replied = false;

  constructor(private readonly ops: SessionOps, private readonly event: RunningEvent, readonly sessionId: number,
    readonly type: string, readonly id: number | undefined) {}

  reply(body?: unknown, type?: string): void {
    if (type !== undefined) checkType('reply', type);
    try {
      this.ops.sendTo(this.sessionId, type ?? this.type, body, this.id, this.event);
    } catch (err) {
      throw encodeFailure('reply', err);
    }
    this.replied = true;
  }
}

function sendError(ops: SessionOps, sessionId: number, body: ProtocolErrorBody, id: number | undefined, event: RunningEvent): void {
  ops.sendTo(sessionId, EngineType.error, body, id, event);
}

/** The last message type found and its handler: a batch's messages mostly share a type. */
let lastHandlers: SessionHandlers | null = null;
let lastType = '';
let lastEntry: MessageEntry | undefined;

function runMessage(rt: EventRuntime, handlers: SessionHandlers, ops: SessionOps, frame: NetworkFrame, ctx: RunningEvent): unknown {
  const sessionId = ctx.sessionId ?? 0;
  // A raw handler decodes the frame itself; the main thread named the event after its type.
  const raw = ctx.name !== MESSAGE_EVENT ? handlers.messages.get(ctx.name)?.raw : undefined;
  if (raw !== undefined) return raw(frame, ctx);
  if (ctx.name === REFUSED_EVENT) {
    const bytes = frame.bytes.subarray(frame.start, frame.end);
    ops.sendFrame(sessionId, codecOf(sessionId) === 'json' ? textDecoder.decode(bytes) : bytes.slice());
    return undefined;
  }
  if (ctx.name === UNANSWERED_EVENT) {
    answerUnanswered(ops, frame, sessionId, ctx);
    return undefined;
  }
  let envelope;
  try {
    // The frame is in the worker's claim buffer: decode before anything else. An event named
    // after its type is a frame whose type the main thread matched in the canonical form.
    const codec = codecOf(sessionId);
    // An event named after its type is a frame whose type the main thread matched in the
    // canonical form: only its body is decoded.
    const named = ctx.name !== MESSAGE_EVENT;
    envelope = codec === 'msgpack'
      ? (named && decodeCanonicalPacked(frame, ctx.name)) || decodeMsgpack(frame)
      : (named && decodeCanonical(frame, ctx.name)) || decode(frame.bytes.subarray(frame.start, frame.end), codec);
  } catch (err) {
    if (!(err instanceof DecodeFailure)) throw err;
    const body: ProtocolErrorBody = { code: err.code, message: err.message };
    if (err.type !== undefined) body.type = err.type;
    sendError(ops, sessionId, body, err.id, ctx);
    return undefined;
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
    sendError(ops, sessionId, protocolErrorBody(ProtocolError.unknownType, [type], type), id, ctx);
    return undefined;
  }
  if (entry.raw !== undefined) return entry.raw(frame, ctx);
  if (ctx.name !== type) ctx.setEventName(type);
  const message = new Message(ops, ctx, sessionId, type, id);
  let result: unknown;
  try {
    result = rt.call(entry.async, ctx, entry.fn, envelope.body, message, ctx);
  } catch (err) {
    // A synchronous failure: the worker drops the event's changes at once, and what it sent with
    // them, so the client is told now.
    if (ctx.tx !== undefined) {
      dropSent(rt, ctx);
      sendFailure(ops, ctx, type, id);
    }
    return handlerFailed(ops, ctx, entry.plugin, message, err);
  }
  const rerunnable = result instanceof Promise || ctx.tx !== undefined;
  if (rerunnable) {
    // An object conflict runs the plugin's handler again with the decoded message (the frame's
    // bytes are gone by then), and a failure of the rerun is answered like the first run's.
    const body = envelope.body;
    ctx.owner = { plugin: entry.plugin, stage: 'message handler', subject: type };
    ctx.failureReply = () => sendFailure(ops, ctx, type, id);
    ctx.rerun = () => {
      // The first run's replies were discarded with its changes.
      message.replied = false;
      try {
        const again = rt.call(entry.async, ctx, entry.fn, body, message, ctx);
        return again instanceof Promise ? again.catch((err: unknown) => handlerFailed(ops, ctx, entry.plugin, message, err)) : again;
      } catch (err) {
        return handlerFailed(ops, ctx, entry.plugin, message, err);
      }
    };
  }
  if (result instanceof Promise) return result.catch((err: unknown) => handlerFailed(ops, ctx, entry.plugin, message, err));
  return undefined;
}

/** Answers a client frame whose event will never finish (`_session.unanswered`), with its id when it has one. */
function answerUnanswered(ops: SessionOps, frame: NetworkFrame, sessionId: number, ctx: RunningEvent): void {
  const why = frame.bytes[frame.start]!;
  let type: string | undefined;
  let id: number | undefined;
  try {
    ({ type, id } = decode(frame.bytes.subarray(frame.start + 1, frame.end), codecOf(sessionId)));
  } catch (err) {
    if (!(err instanceof DecodeFailure)) throw err;
    ({ type, id } = err);
  }
  const shown = type ?? '(unreadable)';
  const body = why === Unanswered.timedOut
    ? protocolErrorBody(ProtocolError.timeout, [shown], type)
    : protocolErrorBody(ProtocolError.dropped, [shown, DROPPED_BECAUSE[why] ?? 'it never finished'], type);
  sendError(ops, sessionId, body, id, ctx);
}

function sendFailure(ops: SessionOps, ctx: RunningEvent, type: string, id: number | undefined): void {
  sendError(ops, ctx.sessionId ?? 0, protocolErrorBody(ProtocolError.handlerFailed, [type], type), id, ctx);
}

/**
 * Tells the client its request failed, unless the handler had replied (each request gets one
 * answer), then throws for the worker to log (naming the plugin, with its stack). An event with
 * object changes answers once they are discarded (`failureReply`), its replies with them.
 */
function handlerFailed(ops: SessionOps, ctx: RunningEvent, plugin: string, message: Message, err: unknown): never {
  if (ctx.tx === undefined && !message.replied) sendFailure(ops, ctx, message.type, message.id);
  throw new PluginError(plugin, 'message handler', err, { subject: message.type });
}

type Handlers<I> = ReadonlyArray<{ plugin: string; fn: SessionHandler<I> }>;

/**
 * Runs every plugin's opened or closed handler in plugin order; synchronously while they are
 * synchronous (the event then needs no await), awaiting each from the first one that is not.
 * Each runs in the event's async context, so after its awaits its objects, sends and invokes
 * are still its event's.
 */
function runHandlers<I>(rt: EventRuntime, list: Handlers<I>, info: I, ctx: RunningEvent, what: string): void | Promise<void> {
  const errors: PluginError[] = [];
  for (let i = 0; i < list.length; i++) {
    const { plugin, fn } = list[i]!;
    try {
      // Always in the event's async context (once per session: its cost does not matter), so a
      // plain function that returns a promise chain keeps its event too.
      const result = rt.call(true, ctx, fn, info, ctx, undefined);
      if (result instanceof Promise) return finishAsync(rt, list, i, result, info, ctx, what, errors);
    } catch (err) {
      errors.push(handlerFailure(plugin, what, info, err));
    }
  }
  throwAll(errors, what);
}

async function finishAsync<I>(rt: EventRuntime, list: Handlers<I>, from: number, pending: Promise<unknown>, info: I,
  ctx: RunningEvent, what: string, errors: PluginError[]): Promise<void> {
  for (let i = from; i < list.length; i++) {
    const { plugin, fn } = list[i]!;
    try {
      // Past an await nothing runs synchronously in the event: each later handler enters its context.
      await (i === from ? pending : rt.call(true, ctx, fn, info, ctx, undefined));
    } catch (err) {
      errors.push(handlerFailure(plugin, what, info, err));
    }
  }
  throwAll(errors, what);
}

function handlerFailure<I>(plugin: string, what: string, info: I, err: unknown): PluginError {
  // A native hook's failure already names the plugin, the hook and the session.
  if (err instanceof PluginError && err.plugin === plugin) return err;
  return new PluginError(plugin, `session-${what} handler`, err, { subject: `session ${String((info as { sessionId?: number }).sessionId)}` });
}

function throwAll(errors: PluginError[], what: string): void {
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} session-${what} handlers failed`);
}
