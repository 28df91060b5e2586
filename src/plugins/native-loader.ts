/**
 * Native plugins (shared libraries built against native/include/gsf_plugin.h) on one thread.
 *
 * The manifest names one as it names a managed plugin: a folder under `plugins/` holding a
 * `gsf-plugin.json` (`{"native": "build/<name>.so"}`, the library `gsf_add_plugin` builds), or
 * a path to the library itself. The library is loaded once per process (`native.pluginLoad`:
 * every ABI check first, then its init); each thread then registers its events and message
 * types on its own runtime, exactly where managed ones go, so duplicates across both kinds are
 * found by the same checks. A handler's effects come back from the call and are applied
 * through the thread's session operations.
 */
import fs from 'node:fs';
import path from 'node:path';
import { native, ContextCell, EffectKind, type NativeCallOutcome, type NativeCallResult } from '../native.ts';
import { GsfError } from '../errors.ts';
import { runsNatively, takesRawPayload, type EventRuntime, type RunningEvent } from '../events/runtime.ts';
import type { EventContext, NetworkFrame } from '../events/types.ts';
import type { Logger } from '../log/logger.ts';
import { DecodeError, decodeFrame, sessionCodec, trailingId } from '../session/codec.ts';
import { addRawMessageHandler } from '../session/worker/message-event.ts';
import { sessionOps, type SessionOps } from '../session/ops.ts';
import { OutboundWriter } from '../session/worker/outbound-writer.ts';
import { EngineType, ProtocolError, protocolErrorBody, type ProtocolErrorBody } from '../session/protocol.ts';
import type { PluginDefinition } from './types.ts';
import { contextCells, countCachedReads, settleNativeCall, writeLine, type NativeCallEnv } from './native-calls.ts';
import { registerNativeApi } from './native-api.ts';
import { applySessionEffect } from './native-sessions.ts';
import { registerNativeSessionHooks } from './native-session-hooks.ts';
import { registerNativeLifecycle } from './native-lifecycle.ts';
import { registerNativeDeclarations } from './native-results.ts';
import { addTransactEvent } from './native-transact.ts';
import { dropSent } from '../events/drop-sent.ts';

/** The file that marks a plugin folder as native and says where its library is. */
import { LIBRARY, NATIVE_MARKER } from './native-files.ts';
export { NATIVE_MARKER, declareNativeTargets, isNativeLibrary, nativeLibraryOf } from './native-files.ts';

// Read once: module bindings are getters under the CommonJS transform event workers load with,
// and these are called for every event.
const callMessage = native.pluginCallMessage, callEvent = native.pluginCallEvent;
const setCells = contextCells, countReads = countCachedReads, settle = settleNativeCall;
const { frameStart: C_FRAME_START, frameEnd: C_FRAME_END, ringWrite: C_RING_WRITE } = ContextCell;

/** A plugin's label in messages: its folder for `<folder>/build/<lib>`, else the library's name. */
function labelOf(file: string): string {
  const dir = path.dirname(file);
  if (path.basename(dir) === 'build' && fs.existsSync(path.join(dir, '..', NATIVE_MARKER))) return path.basename(path.dirname(dir));
  return path.basename(file).replace(LIBRARY, '');
}

/** Loads the library (once per process) and describes it as a plugin definition for `loadPlugins`. */
export function nativePluginDefinition(file: string, rt: EventRuntime): PluginDefinition {
  const label = labelOf(file);
  let info;
  try {
    info = native.pluginLoad(file);
  } catch (err) {
    const e = err as Error & { reason?: string };
    const hint = e.reason === 'missing' ? ' (build native plugins with `npm run build:plugins`)' : '';
    throw new GsfError('GSF_ERR_PLUGIN_LOAD', [label, `${e.message}${hint}`], { cause: err });
  }
  const ops = sessionOps(rt);
  applyInitEffects(info.effects, ops, rt.log);
  return {
    name: info.name,
    version: info.version,
    register(api) {
      for (const { name, handler } of info.events) api.event(name, eventHandler(rt, info.name, name, handler, ops));
      for (const { type, handler } of info.messages) {
        addRawMessageHandler(rt, info.name, type, messageHandler(rt, info.name, type, handler, ops));
      }
      if (info.api !== null) registerNativeApi(rt, info.name, info.api, ops);
      registerNativeSessionHooks(api, rt, info.name, info.path, ops);
      registerNativeLifecycle(api, rt, info, ops, applyInitEffects);
      registerNativeDeclarations(api, info.path);
      addTransactEvent(rt, ops);
    },
  };
}

function eventHandler(rt: EventRuntime, plugin: string, event: string, handler: number, ops: SessionOps) {
  /** What follows the call: its reads counted, its outcome applied. */
  const after = (r: unknown, ev: RunningEvent): void | Promise<void> => {
    countReads(ev);
    if (r === null) return undefined;
    // An object conflict runs the handler again (AwaitingEvents.rerun) once the claim's buffer
    // holds other events' payloads: on a copy of this one.
    if (ev.payload instanceof Uint8Array) ev.payload = ev.payload.slice();
    return settle(r as NativeCallOutcome, { rt, ev, ops, log: rt.log, plugin, what: 'event', name: event });
  };
  // The worker hands the payload over as it was queued (msgpack bytes): the call is direct. An
  // event worker runs runs of these events without this function (`runsNatively`), and calls
  // `after` for the one whose call left it something to do.
  const fn = takesRawPayload((bytes: Uint8Array | null, ctx: EventContext): void | Promise<void> => {
    const ev = ctx as RunningEvent;
    setCells(ev);
    return after(callEvent(handler, bytes), ev);
  });
  return runsNatively(fn, { handler, settle: after });
}

function messageHandler(rt: EventRuntime, plugin: string, type: string, handler: number, ops: SessionOps) {
  // On an event worker the handler's frames go straight into the worker's outbound ring: the
  // addon writes them there as send records, and only other outcomes come back as values.
  const out = rt.effects instanceof OutboundWriter ? rt.effects : null;
  const ring = out?.ringBytes() ?? null;
  return (frame: NetworkFrame, ctx: EventContext): void | Promise<void> => {
    const ev = ctx as RunningEvent;
    if (ctx.name !== type) ctx.setEventName(type);
    const c = setCells(ev);
    c[C_FRAME_START] = frame.start;
    c[C_FRAME_END] = frame.end;
    const at = out === null ? -1 : out.nativePosition(ev);
    c[C_RING_WRITE] = at;
    const r = callMessage(handler, frame.bytes, at < 0 ? null : ring);
    countReads(ev);
    if (r === null) return undefined;
    if (typeof r === 'number') {
      out!.nativeWritten(r);
      return undefined;
    }
    if (typeof r === 'string' || r instanceof Uint8Array) {
      ops.sendFrame(ev.sessionId ?? 0, r);
      return undefined;
    }
    // An object conflict runs the handler again (AwaitingEvents.rerun) once the claim's buffer
    // holds other frames: on a copy of this one, as message-event.ts reruns a managed handler on
    // the decoded message.
    const copy: NetworkFrame = { bytes: frame.bytes.slice(frame.start, frame.end), start: 0, end: frame.end - frame.start, claim: -1, claimEnd: 0 };
    ev.rerun = () => rerunMessage(handler, copy, { rt, ev, ops, log: rt.log, plugin, what: 'message handler', name: type });
    ev.owner = { plugin, stage: 'message handler', subject: type };
    return settleMessageCall(r, frame, { rt, ev, ops, log: rt.log, plugin, what: 'message handler', name: type });
  };
}

/** Runs a native message handler again on its frame (a copy); its frames are held with the event's. */
function rerunMessage(handler: number, frame: NetworkFrame, env: NativeCallEnv): void | Promise<void> {
  // The first run's replies were discarded with its changes.
  env.ev.nativeReplied = false;
  const c = contextCells(env.ev);
  c[C_FRAME_START] = frame.start;
  c[C_FRAME_END] = frame.end;
  c[C_RING_WRITE] = -1;
  const r = callMessage(handler, frame.bytes, null);
  countCachedReads(env.ev);
  if (r === null) return undefined;
  if (typeof r === 'string' || r instanceof Uint8Array) {
    env.ops.sendFrame(env.ev.sessionId ?? 0, r);
    return undefined;
  }
  if (typeof r === 'number') throw new Error('native message rerun: a ring position without a ring');
  return settleMessageCall(r, frame, env);
}

/** A message call that did more than reply, or failed: bad frames and failures are answered as for a managed handler. */
function settleMessageCall(r: NativeCallResult | unknown[], frame: NetworkFrame, env: NativeCallEnv): void | Promise<void> {
  const sessionId = env.ev.sessionId ?? 0;
  if (!Array.isArray(r) && r.decodeFailed) {
    decodeFailed(frame, sessionId, env.name, r.error, env.ops);
    return undefined;
  }
  // As for a managed handler that threw: the client learns its request failed. A continuation
  // that fails while the event awaits, holding objects, has what the event sent discarded with
  // its changes: it answers once they are (failureReply), as message-event.ts does.
  // The message's id, for a failure the native side did not name it in: read from the frame's
  // last bytes (copied now, since the frame may be gone by the time a continuation fails), only
  // if such a failure comes.
  const tail = frame.bytes.slice(Math.max(frame.start, frame.end - 32), frame.end);
  env.onFailure = (messageId) => {
    const id = messageId ?? trailingId(tail, sessionCodec(sessionId) === 'msgpack');
    const body = protocolErrorBody(ProtocolError.handlerFailed, [env.name], env.name);
    const ev = env.ev;
    if (ev.parked && ev.tx !== undefined) {
      ev.failureReply = () => env.ops.sendTo(sessionId, EngineType.error, body, id);
      return;
    }
    // Failing in its synchronous run with object changes: what it sent goes with them.
    if (ev.tx !== undefined) dropSent(env.rt, ev);
    // Without objects a reply it made stays sent: each request gets one answer (the failure is logged).
    else if (ev.nativeReplied) return;
    env.ops.sendTo(sessionId, EngineType.error, body, id);
  };
  return settleNativeCall(r, env);
}

/** The error frame a managed handler's session would get for a frame that does not decode. */
function decodeFailed(frame: NetworkFrame, sessionId: number, type: string, nativeError: string, ops: SessionOps): void {
  try {
    decodeFrame(frame.bytes.subarray(frame.start, frame.end), sessionCodec(sessionId));
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    const body: ProtocolErrorBody = { code: err.code, message: err.message };
    if (err.type !== undefined) body.type = err.type;
    ops.sendTo(sessionId, EngineType.error, body, err.id);
    return;
  }
  // JavaScript reads it, the stricter native decoder does not (invalid UTF-8, nesting depth).
  ops.sendTo(sessionId, EngineType.error, { code: ProtocolError.malformed, message: nativeError, type }, undefined);
}

/** Applies what a native plugin's init produced: log lines, frames (sessions, groups). */
export function applyInitEffects(effects: unknown[], ops: SessionOps, log: Logger): void {
  for (let i = 0; i < effects.length;) {
    switch (effects[i]) {
      case EffectKind.log:
        writeLine(log, effects[i + 1] as number, effects[i + 2] as string);
        i += 3;
        break;
      case EffectKind.send:
        ops.sendFrame(effects[i + 1] as number, effects[i + 2] as string | Uint8Array);
        i += 3;
        break;
      case EffectKind.publish:
        ops.publishFrames(effects[i + 1] as string, effects[i + 2] as string, effects[i + 3] as Uint8Array);
        i += 4;
        break;
      default: {
        // Group changes, closes and broadcasts (ABI 1.2); account calls need an event.
        const next = applySessionEffect(effects, i, ops);
        if (next < 0) throw new Error(`native init effects: unexpected record ${String(effects[i])}`);
        i = next;
      }
    }
  }
}
