/**
 * The log lines an event worker writes about events: a handler's failure (naming its plugin,
 * with the plugin's own stack), the SPEC slow-event line, and events no handler of the worker
 * takes. Each kind is written at most 10 times per event name and second; then one line says
 * how many were left out.
 */
import { native } from '../../native.ts';
import type { Logger } from '../../log/logger.ts';
import { createLineLimiter, type LineLimiter } from '../../log/rate-limit.ts';
import { pluginFailure, pluginStack } from '../failure.ts';
import type { HandlerEntry, RunningEvent } from '../runtime.ts';

export class EventLines {
  /** slow_event_log_threshold_in_ms. */
  slowMs = Infinity;
  private readonly failures: LineLimiter;
  private readonly slow: LineLimiter;

  constructor(log: Logger) {
    this.failures = createLineLimiter({ perKeyPerSecond: 10, log });
    this.slow = createLineLimiter({ perKeyPerSecond: 10, log });
  }

  /** Writes the counts of lines left out so far: the worker's serve task ends (its thread may end before the second does). */
  flushAll(): void {
    this.failures.flushAll();
    this.slow.flushAll();
  }

  /** The failure and slow-event lines of a finished event. */
  report(ev: RunningEvent, entry: HandlerEntry, err: unknown, queueMs: number, handlerMs: number, ioMs: number,
    awaitedMs = 0): void {
    if (err !== undefined) {
      const owner = ev.owner;
      const failure = owner === null ? pluginFailure(entry.plugin, 'event', entry.event, err)
        : pluginFailure(owner.plugin, owner.stage, owner.subject, err);
      this.failures.error(ev.name, `${failure.code}: ${failure.message}`,
        { event_name: ev.name, event_id: ev.id, event_tag: ev.tag, stack: pluginStack(failure) });
    }
    const executionMs = queueMs + handlerMs + ioMs;
    if (executionMs > this.slowMs) {
      this.slow.warn(ev.name, `Slow event: event_name=${ev.name}, event_id=${ev.id}, execution_time=${executionMs.toFixed(3)}`,
        awaitedMs > 0 ? { awaited_ms: Number(awaitedMs.toFixed(3)) } : undefined);
    }
  }

  /**
   * An event whose handler `handler` this worker does not have (a plugin reload removed it
   * after the event was queued): dropped, and counted in engine/events_unknown.
   */
  unknown(ev: RunningEvent, handler: string): void {
    this.failures.error(ev.name, `GSF_ERR_UNKNOWN_EVENT: event_name=${ev.name}, event_id=${ev.id}, event_tag=${ev.tag}: `
      + `no handler '${handler}' on this event thread; the event is dropped`);
    native.counterIncrease('engine', 'events_unknown', 1);
  }
}
