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
import {
  native, ContextCell, EffectKind, EventKind, NATIVE_STATUS_NAMES, NativeStatus, type NativeCallOutcome,
} from '../native.ts';
import { GsfError, gsfError } from '../errors.ts';
import { intern, takesRawPayload, type EventRuntime } from '../events/runtime.ts';
import type { EventContext, NetworkFrame } from '../events/types.ts';
import type { Logger } from '../log/logger.ts';
import { DecodeError, decodeFrame, sessionCodec } from '../session/codec.ts';
import { addRawMessageHandler } from '../session/message-event.ts';
import { sessionOps, type SessionOps } from '../session/ops.ts';
import { EngineType, ProtocolError, type ProtocolErrorBody } from '../session/protocol.ts';
import type { PluginDefinition } from './types.ts';

/** The file that marks a plugin folder as native and says where its library is. */
export const NATIVE_MARKER = 'gsf-plugin.json';
const LIBRARY = /\.(so|dylib|dll)$/;

/** Whether a resolved plugin file is a native library. */
export function isNativeLibrary(file: string): boolean {
  return LIBRARY.test(file);
}

/** The library a native plugin folder names in its gsf-plugin.json, or null for other folders. */
export function nativeLibraryOf(folder: string): string | null {
  const marker = path.join(folder, NATIVE_MARKER);
  if (!fs.existsSync(marker)) return null;
  const label = path.basename(folder);
  let spec: unknown;
  try {
    spec = JSON.parse(fs.readFileSync(marker, 'utf8'));
  } catch (err) {
    throw gsfError('GSF_ERR_PLUGIN_LOAD', label, `${marker} is not valid JSON: ${(err as Error).message}`);
  }
  const library = (spec as { native?: unknown } | null)?.native;
  if (typeof library !== 'string' || !LIBRARY.test(library)) {
    throw gsfError('GSF_ERR_PLUGIN_LOAD', label, `${marker} must be {"native": "<path of the .so, relative to the folder>"}`);
  }
  return path.resolve(folder, library);
}

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
  applyEffects(info.effects, ops, rt.log);
  return {
    name: info.name,
    version: info.version,
    register(api) {
      for (const { name, handler } of info.events) api.event(name, eventHandler(info.name, name, handler, ops, rt.log));
      for (const { type, handler } of info.messages) {
        addRawMessageHandler(rt, info.name, type, messageHandler(info.name, type, handler, ops, rt.log));
      }
    },
  };
}

/** Lets native invoke and timers target every event registered on this thread (managed ones too). */
export function declareNativeTargets(rt: EventRuntime): void {
  native.pluginDeclareEvents([...rt.handlers.keys()].filter((name) => !name.startsWith('_')));
}

/** This thread's context cells: the event of the next native call (see ContextCell). */
let cells: Float64Array | null = null;
const C_ID = ContextCell.eventId, C_TAG = ContextCell.tag, C_KIND = ContextCell.kind, C_SESSION = ContextCell.sessionId;
const C_NAME = ContextCell.nameId, C_START = ContextCell.frameStart, C_END = ContextCell.frameEnd;

function setContext(ctx: EventContext, nameId: number): Float64Array {
  const c = cells ??= new Float64Array(native.pluginContextView());
  c[C_ID] = ctx.id;
  c[C_TAG] = ctx.tag;
  c[C_KIND] = EventKind[ctx.kind];
  c[C_SESSION] = ctx.sessionId ?? 0;
  c[C_NAME] = nameId;
  return c;
}

function eventHandler(plugin: string, event: string, handler: number, ops: SessionOps, log: Logger) {
  // The worker hands the payload over as it was queued (msgpack bytes): the call is direct.
  return takesRawPayload((bytes: Uint8Array | null, ctx: EventContext): void => {
    setContext(ctx, intern(ctx.name));
    const r = native.pluginCallEvent(handler, bytes);
    if (r !== null) finish(r, ctx.sessionId ?? 0, plugin, 'event', event, ops, log);
  });
}

function messageHandler(plugin: string, type: string, handler: number, ops: SessionOps, log: Logger) {
  const nameId = intern(type);
  return (frame: NetworkFrame, ctx: EventContext): void => {
    if (ctx.name !== type) ctx.setEventName(type);
    const c = setContext(ctx, nameId);
    c[C_START] = frame.start;
    c[C_END] = frame.end;
    const r = native.pluginCallMessage(handler, frame.bytes);
    if (r === null) return;
    const sessionId = ctx.sessionId ?? 0;
    if (typeof r === 'object' && !(r instanceof Uint8Array) && r.decodeFailed) {
      decodeFailed(frame, sessionId, type, r.error, ops);
      return;
    }
    finish(r, sessionId, plugin, 'message handler', type, ops, log, (id) => {
      // As for a managed handler that threw: the client learns its request failed.
      const body: ProtocolErrorBody = { code: ProtocolError.handlerFailed, message: `the handler of '${type}' failed`, type };
      ops.sendTo(sessionId, EngineType.error, body, id);
    });
  };
}

/**
 * Applies a call's outcome: its frame, or its effects (a timed-out call has none: the binding
 * dropped them). A failing status becomes an error for the worker to log, with the plugin and
 * the handler's name.
 */
function finish(r: Exclude<NativeCallOutcome, null>, sessionId: number, plugin: string, what: string, name: string,
  ops: SessionOps, log: Logger, onFailure?: (messageId: number | undefined) => void): void {
  if (typeof r === 'string' || r instanceof Uint8Array) {
    ops.sendFrame(sessionId, r);
    return;
  }
  applyEffects(r.effects, ops, log);
  if (r.status === NativeStatus.ok) return;
  if (r.status !== NativeStatus.expired) onFailure?.(r.messageId);
  const status = NATIVE_STATUS_NAMES[r.status] ?? `status ${r.status}`;
  throw new Error(`plugin '${plugin}' ${what} '${name}' failed: ${status}${r.error ? `: ${r.error}` : ''}`);
}

/** The error frame a managed handler's session would get for a frame that does not decode. */
function decodeFailed(frame: NetworkFrame, sessionId: number, type: string, nativeError: string, ops: SessionOps): void {
  try {
    decodeFrame(frame.bytes.subarray(frame.start, frame.end), sessionCodec(sessionId));
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    const body: ProtocolErrorBody = { code: err.code, message: err.message };
    if (err.type !== undefined) body.type = err.type;
    ops.sendTo(sessionId, EngineType.error, body, undefined);
    return;
  }
  // JavaScript reads it, the stricter native decoder does not (invalid UTF-8, nesting depth).
  ops.sendTo(sessionId, EngineType.error, { code: ProtocolError.malformed, message: nativeError, type }, undefined);
}

/** Applies the flat effects array of a native call (see EffectKind). */
export function applyEffects(effects: unknown[], ops: SessionOps, log: Logger): void {
  for (let i = 0; i < effects.length;) {
    switch (effects[i]) {
      case EffectKind.send:
        ops.sendFrame(effects[i + 1] as number, effects[i + 2] as string | Uint8Array);
        i += 3;
        break;
      case EffectKind.publish:
        ops.publishFrames(effects[i + 1] as string, effects[i + 2] as string, effects[i + 3] as Uint8Array);
        i += 4;
        break;
      case EffectKind.log: {
        const level = effects[i + 1] as number;
        const line = effects[i + 2] as string;
        if (level >= 2) log.error(line);
        else if (level === 1) log.warn(line);
        else if (level === 0) log.info(line);
        else log.vlog(-level, line);
        i += 3;
        break;
      }
      default:
        throw new Error(`native effects: unknown record ${String(effects[i])}`);
    }
  }
}
