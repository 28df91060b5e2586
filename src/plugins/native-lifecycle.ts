/**
 * A native plugin's lifecycle (ABI 1.2) on the plugin API's own lists: its descriptor's on_start
 * and on_stop become onStart and onStop entries, its timeout handlers an onEventTimeout entry, so
 * a reload replaces them with the new copy's exactly as it replaces a managed plugin's. on_stop
 * runs on a thread of its own: past its deadline gsf logs it and goes on. The timers a plugin
 * starts with timer_start fire the gsf event `_native.timer`, registered once per thread here.
 */
import { native, NATIVE_STATUS_NAMES, NativeStatus, type NativeHookOutcome, type NativePluginInfo } from '../native.ts';
import { decodePayload } from '../events/codec.ts';
import { takesRawPayload, type EventRuntime, type RunningEvent } from '../events/runtime.ts';
import type { EventContext } from '../events/types.ts';
import type { Logger } from '../log/logger.ts';
import type { SessionOps } from '../session/ops.ts';
import type { PluginApi } from './types.ts';
import { contextCells, countCachedReads, settleNativeCall, writeLine } from './native-calls.ts';

/** The event every timer_start timer fires; its payload is [timer key, plugin name]. */
export const NATIVE_TIMER_EVENT = '_native.timer';

/** How long on_stop may take at shutdown and before a reload swaps (EventDispatcher.shutdown_drain_timeout_in_ms). */
let stopBudgetMs = 10_000;

/** Sets on_stop's budget (the server, from its manifest). */
export function setNativeStopBudget(ms: number): void {
  stopBudgetMs = ms;
}

/** A hook's failure as an Error naming its status and set_error's message. */
function hookFailure(r: NativeHookOutcome | { status: number; error: string }): Error {
  const status = NATIVE_STATUS_NAMES[r.status] ?? `status ${r.status}`;
  return new Error(`${status}${r.error ? `: ${r.error}` : ''}`);
}

/** Registers what a native copy runs besides its handlers: lifecycle hooks, timeout handlers, the timer event. */
export function registerNativeLifecycle(api: PluginApi, rt: EventRuntime, info: NativePluginInfo, ops: SessionOps,
  applyEffects: (effects: unknown[], ops: SessionOps, log: Logger) => void): void {
  addTimerEvent(rt, ops);
  const { path, hooks } = info;
  if (hooks === undefined || rt.role !== 'main') return;
  if (hooks.start) {
    api.onStart(() => {
      const r = native.pluginStart(path);
      if (r === null) return;
      applyEffects(r.effects, ops, rt.log);
      if (r.status !== NativeStatus.ok) throw hookFailure(r);
    });
  }
  if (hooks.stop) api.onStop(() => runStop(info, rt.log));
  if (hooks.timeout) {
    api.onEventTimeout((name, eventId, tag, sessionId) => {
      applyEffects(native.pluginTimeout(path, name, eventId, tag, sessionId ?? 0), ops, rt.log);
    });
  }
}

/**
 * Runs on_stop on its own thread; resolves when it returns or its deadline passes (then logged:
 * from then on its host calls fail with GSF_STATUS_EXPIRED, and its lines go to the log as written).
 */
async function runStop(info: NativePluginInfo, log: Logger): Promise<void> {
  const deadline = Date.now() + stopBudgetMs;
  const job = native.pluginStopBegin(info.path, deadline);
  if (job === 0) return;
  const writeLines = (lines: Array<number | string>): void => {
    for (let i = 0; i < lines.length; i += 2) writeLine(log, lines[i] as number, lines[i + 1] as string);
  };
  for (;;) {
    const r = native.pluginStopTake(job);
    if (r !== null) {
      writeLines(r.lines);
      if (r.status !== NativeStatus.ok) throw hookFailure(r);
      return;
    }
    if (Date.now() >= deadline) {
      writeLines(native.pluginStopAbandon(job));
      log.error(`plugin '${info.name}' on_stop had not returned by its deadline (${stopBudgetMs} ms, `
        + 'EventDispatcher.shutdown_drain_timeout_in_ms): gsf goes on without waiting for it');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Registers the `_native.timer` event on this thread once. */
function addTimerEvent(rt: EventRuntime, ops: SessionOps): void {
  if (rt.handlers.has(NATIVE_TIMER_EVENT)) return;
  rt.addHandler('gsf', NATIVE_TIMER_EVENT, takesRawPayload((bytes: Uint8Array | null, ctx: EventContext): void | Promise<void> => {
    const ev = ctx as RunningEvent;
    const [key, plugin] = decodePayload(bytes!, 0, bytes!.length) as [number | bigint, string];
    contextCells(ev);
    const r = native.pluginCallTimer(Number(key));
    countCachedReads(ev);
    return settleNativeCall(r, { rt, ev, ops, log: rt.log, plugin, what: 'timer', name: ev.name });
  }) as never);
}

/**
 * A reload switched away from the copy at `oldPath`: its timers and held continuations end now.
 * Once its events have drained, `retireNativeCopy` runs its on_unload.
 */
export function endNativeCopy(oldPath: string): void {
  native.pluginEndHoldings(oldPath);
}

/** The old copy's last events ended: gsf releases what it held for it and calls its on_unload. */
export function retireNativeCopy(oldPath: string, ops: SessionOps, log: Logger,
  applyEffects: (effects: unknown[], ops: SessionOps, log: Logger) => void): void {
  const effects = native.pluginRetire(oldPath);
  if (effects !== null) applyEffects(effects, ops, log);
}

/** Shutdown: every native timer and held continuation ends, its user data released. */
export function endAllNativeHoldings(): number {
  return native.pluginEndHoldings(null);
}
