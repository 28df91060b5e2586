/**
 * The events of one event worker that await. An event whose handler returned a pending promise
 * (or whose object changes must be committed) is parked: it keeps its tag busy in the native
 * queue but frees the worker, and it finishes here when that settles: its commit (and reruns),
 * its profiler sample, its tag, and what it produced, which was held meanwhile.
 */
import { native, COMPLETE_STRIDE, CompleteField, CompleteFlag, CompleteResult } from '../../native.ts';
import type { EventRuntime, HandlerEntry, RunningEvent } from '../runtime.ts';
import { parkedGeneration, wakeSelf, workReady } from '../wake.ts';
import type { EventLines } from './lines.ts';

// Local copies: module exports are getters under the CommonJS transform workers load with.
const F_HANDLER = CompleteField.handlerMs, F_IO = CompleteField.ioWaitMs, F_NAME = CompleteField.nameId;
const F_FLAGS = CompleteField.flags, F_START = CompleteField.startMs;
const FLAG_FAILED = CompleteFlag.failed;
const R_REVOKED = CompleteResult.revoked, R_MADE_READY = CompleteResult.madeReady;
const COMPLETE_N = COMPLETE_STRIDE;
const core = native;
// The global `performance` is a lazy getter on Node 20: read it once.
const clock = performance;

export class AwaitingEvents {
  private readonly events = new Map<number, RunningEvent>();
  /** `parkedGeneration` when this worker last let go of its timed-out awaiting events. */
  private seenGeneration = 0;
  /** Resolves a wait for any of them to finish (`anyFinished`). */
  private settled: (() => void) | null = null;
  /** Set when one finished: what it held waits to be flushed. */
  flushDue = false;
  /**
   * Counts the serve loop's awaits. An event whose promise settled before the loop awaited
   * again (an async handler that awaited nothing, or something already settled) spent no time
   * waiting on I/O, only on its batch-mates: it is given no io-wait time.
   */
  turn = 0;

  constructor(
    private readonly slot: number,
    private readonly runtime: EventRuntime,
    private readonly lines: EventLines,
    /** Called when one finished (counted as run; `failed`: its handler or commit failed). */
    private readonly finished: (failed: boolean) => void,
  ) {}

  /** How many await now. */
  get size(): number {
    return this.events.size;
  }

  /**
   * Parks claimed event `i` of the worker's claim, whose synchronous run started at `start` and
   * ended at `parkedAt`, and finishes it when `pending` settles. Everything the event produces
   * is held until then: the frames of its synchronous run are taken back from the ring, and its
   * children wait when it changed objects. False if the slot was revoked (the event timed out).
   */
  park(i: number, ev: RunningEvent, entry: HandlerEntry, pending: Promise<unknown>, start: number, parkedAt: number,
    queueMs: number, startMs: number): boolean {
    const rt = this.runtime;
    // Waits the handler did synchronously (sync engine calls) are io-wait already.
    const syncIoMs = ev.ioWaitMs;
    const handlerMs = Math.max(0, parkedAt - start - syncIoMs);
    if (!core.park(this.slot, i, ev.nameId)) return false;
    ev.parked = true;
    rt.effects?.hold(ev);
    if (ev.heldInvokes !== null && ev.tx === undefined) rt.releaseInvokes(ev);
    this.events.set(ev.id, ev);
    countAwaiting(1);
    const record = new Float64Array(COMPLETE_N);
    record[F_START] = startMs;
    const turn = this.turn;
    const objects = rt.objects;
    const committed = objects === null ? pending
      : pending.then(() => (ev.tx === undefined ? undefined : objects.commit(ev, record, () => this.rerun(ev, entry))));
    // Inline callbacks, not a named closure: one is made per parked event.
    committed.then(() => this.finishSettled(ev, entry, undefined, record, turn, parkedAt, queueMs, handlerMs, syncIoMs),
      (err: unknown) => this.finishSettled(ev, entry, err ?? new Error('handler rejected with a nullish value'), record, turn, parkedAt, queueMs, handlerMs, syncIoMs));
    return true;
  }

  /** A parked event's promise (and commit) settled: finishes it, with the time it awaited if it outlived its turn. */
  private finishSettled(ev: RunningEvent, entry: HandlerEntry, err: unknown, record: Float64Array, turn: number, parkedAt: number,
    queueMs: number, handlerMs: number, syncIoMs: number): void {
    const awaitedMs = turn === this.turn ? 0 : Math.max(0, clock.now() - parkedAt);
    this.finish(ev, entry, err, record, queueMs, handlerMs, syncIoMs + awaitedMs, awaitedMs);
  }

  private finish(ev: RunningEvent, entry: HandlerEntry, err: unknown, record: Float64Array, queueMs: number,
    handlerMs: number, ioMs: number, awaitedMs: number): void {
    const rt = this.runtime;
    this.events.delete(ev.id);
    record[F_HANDLER] = handlerMs;
    record[F_IO] = ioMs;
    record[F_NAME] = ev.nameId;
    if (err !== undefined) record[F_FLAGS] = FLAG_FAILED;
    // Settled first, its tag still busy: what it produced leaves this thread before the tag's
    // next event can run, on this thread or another, so a session's replies keep their order.
    const settled = core.settleParked(ev.id);
    if (!settled) {
      // Timed out while it waited (the watchdog counted it out): what it did since is dropped,
      // except what goes with object changes whose commit went through all the same (it was
      // with the writer when the timeout came): those are durable, so its counter changes and
      // the events it invoked with them are made too.
      const committed = ev.tx !== undefined && err === undefined;
      if (committed) rt.releaseInvokes(ev);
      else rt.dropInvokes(ev);
      rt.effects?.discard(ev);
      if (committed) {
        rt.log.warn(`event_name=${ev.name}, event_id=${ev.id} timed out while its commit waited, and the commit went through: `
          + 'its object changes, counter changes and invoked events stand; its replies and sends were dropped');
      } else {
        rt.log.vlog(1, `event_name=${ev.name}, event_id=${ev.id} finished after its timeout; its effects were dropped`);
      }
      this.flushDue = true;
    } else {
      if (err !== undefined && ev.tx !== undefined) rt.dropInvokes(ev);
      countAwaiting(-1);
      if (err === undefined || ev.tx === undefined) {
        rt.effects?.release(ev);
        rt.releaseInvokes(ev);
      } else {
        // Its object changes were not committed: nothing it did may be seen, but its failure is answered.
        rt.effects?.discard(ev);
        if (ev.failureReply !== null) {
          ev.failureReply(err);
          rt.effects?.release(ev);
        }
      }
      ev.tx = undefined;
      // Its failure line is written before its answer leaves: whoever reads the answer finds the line.
      this.lines.report(ev, entry, err, queueMs, handlerMs, ioMs, awaitedMs);
      rt.effects?.flush();
      const result = core.finishParked(ev.id, record, 0);
      if (result !== R_REVOKED) {
        if (err !== undefined) core.counterIncrease('engine', 'events_failed', 1);
        core.counterIncrease('engine', 'events_run', 1);
        this.finished(err !== undefined);
        if (result === R_MADE_READY) workReady();
      }
    }
    wakeSelf(this.slot);
    this.settled?.();
  }

  /**
   * Runs the plugin's handler of `ev` again after an object conflict: what the first run held is
   * dropped, and the new run's synchronous part holds its children as the first did.
   */
  private rerun(ev: RunningEvent, entry: HandlerEntry): unknown {
    const rt = this.runtime;
    rt.effects?.discard(ev);
    rt.dropInvokes(ev);
    // Its children are named from `_#1` again (SPEC 6.3): the first run's were dropped.
    ev.children = 0;
    rt.running = ev;
    try {
      return ev.rerun !== null ? ev.rerun() : rt.call(entry.async, ev, entry.fn, ev.payload, ev, undefined);
    } finally {
      rt.running = null;
      if (ev.tx === undefined && ev.heldInvokes !== null) rt.releaseInvokes(ev);
    }
  }

  /** Lets go of the events that timed out while they awaited (their promises may never settle). */
  letGoOfTimedOut(): void {
    const generation = parkedGeneration(this.slot);
    if (generation === this.seenGeneration) return;
    this.seenGeneration = generation;
    const still = new Set(core.parkedOf(this.slot));
    for (const [id, ev] of this.events) {
      if (still.has(id)) continue;
      this.events.delete(id);
      // No commit or rerun from now on: its changes are dropped with its result.
      ev.timedOut = true;
      this.runtime.effects?.discard(ev);
    }
  }

  /** Resolves when one of them finishes, or after `ms` (a serve loop that ends waits for them). */
  anyFinished(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.settled = () => {
        clearTimeout(timer);
        this.settled = null;
        resolve();
      };
    });
  }
}

/**
 * Counters `engine/events_awaiting` (now, all event threads) and `engine/events_awaiting_peak`.
 * Several workers may raise the peak at once; each retries until the stored peak is at least
 * what it saw.
 */
function countAwaiting(delta: number): void {
  const now = core.counterIncrease('engine', 'events_awaiting', delta);
  if (delta <= 0) return;
  for (let peak = core.counterValue('engine', 'events_awaiting_peak') ?? 0; now > peak;
    peak = core.counterValue('engine', 'events_awaiting_peak') ?? 0) {
    core.counterUpdate('engine', 'events_awaiting_peak', now, false);
  }
}
