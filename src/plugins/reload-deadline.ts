/**
 * The deadline of a plugin reload (EventDispatcher.plugin_reload_timeout_in_ms): from the
 * request until the new version serves. A `register` that never finishes (on the main thread
 * or on a new event thread), a resize the reload waits behind, or an `onStop` hook of the
 * running version that hangs would otherwise hold the reload, and every later one, until a
 * restart. Past the deadline the reload is refused (`GSF_ERR_RELOAD_TIMEOUT`), what it staged is
 * discarded, its new event threads are ended, and the running version serves on.
 */
import { GsfError } from '../errors.ts';
import type { Logger } from '../log/logger.ts';

/** Where a reload is, for the refusal should its deadline pass. */
export interface ReloadProgress {
  /** Aborts with the refusal when the deadline passes before the switch. */
  readonly signal: AbortSignal;
  /** The answer's `stage`. */
  stage: string;
  /** What had not finished, for the message. */
  waitingFor: string;
  /** The switch happened: the deadline no longer refuses the reload. */
  switched: boolean;
  /** When the deadline passes (Date.now() time): the new version's onStart hooks are waited for until then. */
  readonly deadlineAt: number;
}

/** Starts the deadline of a reload of `plugins`; `clear` stops it (the reload ended). */
export function reloadDeadline(plugins: readonly string[], ms: number, log: Logger): { progress: ReloadProgress; clear(): void } {
  const controller = new AbortController();
  const progress: ReloadProgress = {
    signal: controller.signal, stage: 'load', waitingFor: 'the reload had not started', switched: false, deadlineAt: Date.now() + ms,
  };
  const timer = setTimeout(() => {
    if (progress.switched) return;
    const named = plugins.map((p) => `plugin '${p}'`).join(', ');
    const error = new GsfError('GSF_ERR_RELOAD_TIMEOUT', [named, ms, progress.waitingFor], {
      details: { plugins: [...plugins], stage: progress.stage, timeout_ms: ms },
    });
    log.error(`${error.code}: ${error.message}`);
    controller.abort(error);
  }, ms);
  timer.unref();
  return { progress, clear: () => clearTimeout(timer) };
}

/** Whether `err` is the refusal of a passed deadline. */
export function isDeadline(err: unknown, progress: ReloadProgress): boolean {
  return progress.signal.aborted && err === progress.signal.reason;
}
