/**
 * Watches running events from the main thread: event timeouts (SPEC 3.3, 6.3) and the
 * event-thread hang checker. Workers publish what they run in the native slot table, so
 * this needs no message from a stuck worker.
 */
import { native, type SlotState, type TimeoutOutcome } from '../../native.ts';
import { describeError } from '../../errors.ts';
import type { ThreadContext } from '../../hooks/thread-context.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { TimeoutHandler } from '../types.ts';
import { parkedEventGone, workReady } from '../wake.ts';

export interface WatchdogSettings {
  timeoutMs: number;
  checker: boolean;
  hangThresholdMs: number;
  hangReportIntervalMs: number;
}

export interface OutstandingEvents {
  count: number;
  /** Running events; `awaiting`: the handler awaits (the event holds its tag, not its thread). */
  running: Array<{
    event_name: string; event_id: number; event_tag: number; event_thread_index: number; elapsed_time_in_sec: number;
    awaiting: boolean;
  }>;
}

/**
 * How often the watchdog looks at the running events: once per second (SPEC 6.4), more often for
 * shorter limits, and twice per `hangReportIntervalMs`, so that a hang line due every interval
 * is written within half an interval of its time.
 */
export function checkPeriodMs(s: Pick<WatchdogSettings, 'timeoutMs' | 'checker' | 'hangThresholdMs' | 'hangReportIntervalMs'>): number {
  return Math.max(10, Math.min(1000, s.timeoutMs / 4, s.checker ? Math.min(s.hangThresholdMs / 4, s.hangReportIntervalMs / 2) : 1000));
}

export class Watchdog {
  private handle: NodeJS.Timeout | null = null;
  /** Last hang report per running event, keyed `slot:eventId`. */
  private readonly hangReports = new Map<string, number>();
  /** Timeouts seen, for tests and diagnostics. */
  timeouts = 0;

  constructor(
    private readonly thread: ThreadContext,
    private readonly dispatcher: Dispatcher,
    private readonly settings: WatchdogSettings,
    private readonly handlers: ReadonlyArray<{ plugin: string; fn: TimeoutHandler }>,
  ) {}

  start(): void {
    this.handle = setInterval(() => this.check(), checkPeriodMs(this.settings));
    this.handle.unref();
  }

  stop(): void {
    if (this.handle !== null) clearInterval(this.handle);
    this.handle = null;
  }

  /**
   * Events claimed and not completed (`event/profiling/outstanding`); with
   * `enable_outstanding_event_profiler`, also the running ones by name and age.
   */
  outstanding(listRunning: boolean): OutstandingEvents {
    const count = native.queueStats().outstanding;
    if (!listRunning) return { count, running: [] };
    const running = native.slotsRunning().map((s) => ({
      event_name: native.nameOf(s.nameId), event_id: s.eventId, event_tag: s.tag,
      event_thread_index: s.slot, elapsed_time_in_sec: s.elapsedMs / 1000, awaiting: s.parked,
    })).sort((a, b) => b.elapsed_time_in_sec - a.elapsed_time_in_sec);
    return { count, running };
  }

  /**
   * One pass over the running events. At equal thresholds the hang line comes first: a hang is
   * reported at its threshold (SPEC 6.3), then the timeout acts.
   */
  check(): void {
    const running = native.slotsRunning();
    const live = new Set<string>();
    for (const s of running) {
      if (s.parked) {
        // An awaiting event holds no thread: it can time out, but it is no thread hang.
        if (s.elapsedMs >= this.settings.timeoutMs) this.timeOutParked(s);
        continue;
      }
      const key = `${s.slot}:${s.eventId}`;
      if (this.settings.checker && s.elapsedMs >= this.settings.hangThresholdMs) this.reportHang(key, s);
      if (s.elapsedMs >= this.settings.timeoutMs) {
        this.timeOut(s);
        continue;
      }
      live.add(key);
    }
    for (const key of this.hangReports.keys()) if (!live.has(key)) this.hangReports.delete(key);
  }

  private reportHang(key: string, s: SlotState): void {
    const now = Date.now();
    const last = this.hangReports.get(key);
    if (last !== undefined && now - last < this.settings.hangReportIntervalMs) return;
    this.hangReports.set(key, now);
    this.thread.log.warn(`event thread hang: event_thread_index=${s.slot}, event_name=${native.nameOf(s.nameId)}, ` +
      `event_id=${s.eventId}, event_tag=${s.tag}, elapsed_time_in_sec=${(s.elapsedMs / 1000).toFixed(3)}`);
  }

  /** An event holds its thread past the timeout: the worker is ended (only that stops it). */
  private timeOut(s: SlotState): void {
    const outcome = this.dispatcher.endWorker(s.threadId, () => native.timeoutSlot(s.slot, s.eventId), (r) => r !== null);
    if (outcome === null) return;
    this.dispatcher.endThreadFor(s.taskId, s.threadId);
    this.dispatcher.reportAbandoned(outcome.abandoned);
    this.timedOut(s, outcome);
    workReady();
  }

  /** An awaiting event passed the timeout: it is cancelled, its worker goes on. */
  private timeOutParked(s: SlotState): void {
    const outcome = native.timeoutParked(s.eventId);
    if (outcome === null) return;
    native.counterIncrease('engine', 'events_awaiting', -1);
    parkedEventGone(s.slot);
    this.timedOut(s, outcome);
  }

  private timedOut(s: SlotState, outcome: TimeoutOutcome): void {
    this.timeouts++;
    // A native handler of this event that is still running may not reply, send or invoke any more.
    native.pluginRevokeEvent(s.eventId);
    const name = native.nameOf(outcome.nameId || s.nameId);
    this.thread.log.error(`Event timeout: event_name=${name}, event_id=${s.eventId}, event_tag=${s.tag}`);
    const dropped = outcome.dropped;
    // Cancelled before they ran: what native plugins keep for them (a transaction) is released.
    for (const d of dropped) native.pluginRevokeEvent(d.id);
    this.dispatcher.eventsGone([outcome.event], 'timed out');
    this.dispatcher.eventsGone(dropped, 'was cancelled');
    if (dropped.length > 0) {
      this.thread.log.warn(`cancelled ${dropped.length} queued event(s) of timed-out tag ${s.tag}`,
        { event_ids: dropped.slice(0, 20).map((d) => d.id) });
    }
    const session = s.sessionId === 0 ? null : s.sessionId;
    for (const { plugin, fn } of this.handlers) {
      const failed = (err: unknown): void => {
        this.thread.log.error(`GSF_ERR_HANDLER_FAILED: plugin '${plugin}' timeout handler '${name}' failed: ${describeError(err)}`);
      };
      try {
        // An async handler (a forced logout awaits the account manager): its rejection is
        // logged as a throw is, never left to end the process as an unhandled rejection.
        const result: unknown = fn(name, s.eventId, s.tag, session);
        if (result instanceof Promise) result.catch(failed);
      } catch (err) {
        failed(err);
      }
    }
  }
}
