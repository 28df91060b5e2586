/**
 * Event-worker side of API answers. A handler's answer goes to the main thread once its event
 * has finished: after its object changes are durable, never for a run whose changes were
 * dropped (an object conflict runs the handler again, and that run answers). Answers of
 * finished events are posted to the native answer mailbox in one call per claim (see
 * pending.ts); a MessagePort per claim cost about ten times as much per answer.
 *
 * The sink joins the worker's `WorkerEffects` (next to the session ring's), so the serve loop
 * tells it when events park, finish, fail or time out.
 */
import { native } from '../../native.ts';
import type { EventRuntime } from '../../events/runtime.ts';
import type { HeldEffects, WorkerEffects } from '../../events/types.ts';
import type { AnswerRecord, AnswerTarget, WriterCall } from '../writer.ts';

/** A request being handled on this worker: its event and whether that event has finished. */
export interface ApiCall extends WriterCall {
  readonly event: HeldEffects;
  /** The event finished: a later answer goes out at once. */
  finished: boolean;
  /** Whether an answer given now goes out at once although the event runs on (it touched no objects yet). */
  answersNow?(): boolean;
}

/** Answer records, flattened: `[rid, status, body]*`. */
export type AnswerBatch = Array<number | string | null>;

class AnswerSink implements WorkerEffects, AnswerTarget {
  private ready: AnswerBatch = [];
  private soon = false;

  /** Starts a request's call on its event (again on a rerun): a rerun answers it again. */
  track(call: ApiCall): void {
    call.event.call = call;
  }

  deliver(call: WriterCall, record: AnswerRecord): void {
    const c = call as ApiCall;
    // An event with no object changes to wait for answers at once, even if it awaits on.
    if (c.finished || c.answersNow?.() === true) {
      this.push(record);
      this.flushSoon();
      return;
    }
    // Kept on the event, not in a Map by event: a Map that gains and loses one entry per event
    // reallocates its table each time.
    (c.event.heldAnswers ??= []).push(record);
  }

  /** The event of `call` finished without parking (a synchronous handler, no object changes). */
  settle(call: ApiCall): void {
    call.finished = true;
    this.release(call.event);
  }

  /** Drops what `call`'s event answered so far (it failed with object changes: they are discarded). */
  drop(call: ApiCall): void {
    call.event.heldAnswers = undefined;
    call.answered = false;
  }

  commit(): void {}

  flush(): void {
    if (this.ready.length === 0) return;
    const batch = this.ready;
    this.ready = [];
    native.pluginApiPostAnswers(batch);
  }

  hold(): void {}

  release(event: HeldEffects): void {
    const list = event.heldAnswers as AnswerRecord[] | undefined;
    if (list === undefined) return;
    event.heldAnswers = undefined;
    for (const r of list) this.push(r);
  }

  discard(event: HeldEffects): void {
    // An object conflict (the handler runs again and answers again), a failure with discarded
    // changes (the failure answer follows) or a timeout (the main thread answers 504).
    if (event.heldAnswers === undefined) return;
    event.heldAnswers = undefined;
    const call = event.call as ApiCall | undefined;
    if (call !== undefined) call.answered = false;
  }

  private push(r: AnswerRecord): void {
    // The native mailbox takes [number, number, string | null] only: one bad record would lose the batch.
    if (typeof r[1] !== 'number' || (typeof r[2] !== 'string' && r[2] !== null)) {
      this.ready.push(r[0], 500, JSON.stringify({ error: 'GSF_ERR_INTERNAL', message: 'internal error: the handler\'s answer could not be written' }));
      return;
    }
    this.ready.push(r[0], r[1], r[2]);
  }

  /** Answers given outside any serve loop's claim (a later answer) leave on the next turn. */
  private flushSoon(): void {
    if (this.soon) return;
    this.soon = true;
    setImmediate(() => {
      this.soon = false;
      this.flush();
    });
  }
}

/** Passes every WorkerEffects call to each member, in order. */
class EffectsChain implements WorkerEffects {
  constructor(readonly members: WorkerEffects[]) {}
  commit(): void { for (const m of this.members) m.commit(); }
  flush(): void { for (const m of this.members) m.flush(); }
  hold(e: HeldEffects): void { for (const m of this.members) m.hold(e); }
  release(e: HeldEffects): void { for (const m of this.members) m.release(e); }
  discard(e: HeldEffects): void { for (const m of this.members) m.discard(e); }
}

const sinks = new WeakMap<EventRuntime, AnswerSink>();

/**
 * The answer sink of a worker's runtime, joined to its effects on first use. The runtime's
 * `effects` becomes a chain of the sink and whatever other feature sets (before or after):
 * a later assignment replaces the other member, never the sink.
 */
export function answerSink(rt: EventRuntime): AnswerSink {
  let sink = sinks.get(rt);
  if (sink) return sink;
  const created = sink = new AnswerSink();
  sinks.set(rt, sink);
  let other: WorkerEffects | null = rt.effects;
  let chain = new EffectsChain(other === null ? [created] : [other, created]);
  Object.defineProperty(rt, 'effects', {
    configurable: true,
    enumerable: true,
    get: () => chain,
    set: (value: WorkerEffects | null) => {
      if (value === chain) return;
      other = value;
      chain = new EffectsChain(other === null ? [created] : [other, created]);
    },
  });
  return sink;
}

export type { AnswerSink };
