/**
 * The engine event that runs API-service handlers (plugin routes, operations-console
 * operations) on the event threads: `_gsf.api`, of kind `api` (SPEC 6.2.4b: events derived from
 * it get random tags). Its payload names a target (the same key on every thread, since every
 * thread registers the same plugins) and carries the request's arguments; the handler answers
 * through a `ResponseWriter`.
 *
 * A handler that throws (or rejects) answers its error (a `GsfError` with an HTTP status as
 * itself, anything else 500) unless it answered already; when the event changed objects its
 * changes and its answer are dropped together and the failure is answered instead.
 */
import { mayHaveCommitted, PluginError } from '../errors.ts';
import type { EventRuntime, RunningEvent } from '../events/runtime.ts';
import { answerSink, type ApiCall, type AnswerSink } from './worker/answer-sink.ts';
import { ResponseWriter, thrownAnswer } from './writer.ts';

export const API_EVENT = '_gsf.api';

/** What runs for one kind of request on an event thread. */
export interface ApiTarget {
  plugin: string;
  /** The writer's kind (`AnswerKind`). */
  kind: number;
  /** How failures name it: `route handler`, `console handler`, … */
  stage: string;
  /** Runs the handler (in the event's async context); a returned promise keeps the event until it settles. */
  run(args: unknown, res: ResponseWriter, ctx: RunningEvent): unknown;
}

/** An API event's payload; a native handler's arguments come as their msgpack bytes. */
export type ApiPayload = [rid: number, key: string, label: string, args: unknown];

interface Registry {
  targets: Map<string, ApiTarget>;
}

const registries = new WeakMap<EventRuntime, Registry>();

/** The API targets of a thread; the first call registers the engine event (and, on workers, the answer sink). */
export function apiTargets(rt: EventRuntime): Map<string, ApiTarget> {
  let reg = registries.get(rt);
  if (reg) return reg.targets;
  const registry: Registry = reg = { targets: new Map() };
  registries.set(rt, reg);
  const sink = rt.role === 'worker' ? answerSink(rt) : null;
  rt.addHandler('gsf', API_EVENT, ((payload: ApiPayload, ev: RunningEvent) => runApiEvent(rt, registry, sink!, payload, ev)) as never);
  return reg.targets;
}

interface RunningCall extends ApiCall {
  readonly event: RunningEvent;
  error: unknown;
}

/** Answers a handler's failure unless it answered already (dropping that answer with the event's changes). */
function failed(sink: AnswerSink, c: RunningCall, target: ApiTarget, err: unknown): PluginError {
  c.error = err;
  if (c.event.tx !== undefined) sink.drop(c);
  if (!c.answered) {
    c.answered = true;
    sink.deliver(c, thrownAnswer(c.rid, err));
  }
  return new PluginError(target.plugin, target.stage, err, { subject: c.label });
}

function runApiEvent(rt: EventRuntime, reg: Registry, sink: AnswerSink, payload: ApiPayload, ev: RunningEvent): unknown {
  const [rid, key, label, args] = payload;
  let call = ev.call as RunningCall | undefined;
  if (call === undefined) {
    // One call per event: a rerun after an object conflict answers the same request.
    call = { rid, label, answered: false, event: ev, finished: false, error: undefined, answersNow: () => ev.tx === undefined };
    ev.call = call;
    const c = call;
    ev.failureReply = (err) => {
      // The event's object changes were discarded: what it answered went with them.
      c.answered = true;
      sink.deliver(c, thrownAnswer(rid, c.error ?? new Error(mayHaveCommitted(err)
        ? 'its object changes may have been committed: the connection to the database was lost at COMMIT (read them again to know)'
        : 'its object changes could not be committed; nothing was changed')));
    };
  }
  sink.track(call);
  const target = reg.targets.get(key);
  if (target === undefined) {
    call.answered = true;
    sink.deliver(call, thrownAnswer(rid, new Error(`${label}: no handler '${key}' on this event thread`)));
    sink.settle(call);
    return undefined;
  }
  ev.owner = { plugin: target.plugin, stage: target.stage, subject: label };
  const res = new ResponseWriter(call, target.kind, sink, rt.log);
  const c = call;
  let result: unknown;
  try {
    // In the event's async context: after an await, the handler's objects, sends and invokes are still its event's.
    result = rt.call(true, ev, target.run, args, res, ev);
  } catch (err) {
    const failure = failed(sink, c, target, err);
    sink.settle(c);
    throw failure;
  }
  if (result instanceof Promise) {
    return result.then(() => undefined, (err: unknown) => {
      throw failed(sink, c, target, err);
    });
  }
  // An event that changed objects answers once they are durable; a read-only one finishes now.
  if (ev.tx === undefined || !rt.objects!.changed(ev)) sink.settle(c);
  return undefined;
}
