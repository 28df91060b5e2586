/**
 * The event running on a thread: the context its handler receives, and the state the event's
 * features keep for it (held invokes and counter changes, object transaction, answers).
 */
import { gsfError } from '../errors.ts';
import type { HeldCounter, HeldTimer } from './held-counters.ts';
import type { EventContext, EventKindName, HeldEffects } from './types.ts';

/** What an event asks of its thread's runtime (`EventRuntime`). */
export interface EventHost {
  current(): RunningEvent | null;
  setEventName(name: string): void;
  /** Event workers: marks this thread's awaiting events that timed out. */
  noticeTimeouts: (() => void) | null;
}

/** An invoked event waiting for its parent (see `RunningEvent.heldInvokes`). */
export type HeldInvoke = [tag: number, nameId: number, handlerId: number, sessionId: number, kind: number,
  payload: Uint8Array | null, id: number, revokeOnDrop?: boolean];

const KIND_NAMES: readonly EventKindName[] = ['user', 'network', 'timer', 'engine', 'api'];

/**
 * The event running on this thread; it is also the context its handler receives. A class
 * (methods on the prototype) rather than closures, because one is made per event.
 */
export class RunningEvent implements EventContext, HeldEffects {
  /** Events created so far by this one (for `{parent}_#{n}` names). */
  children = 0;
  ioWaitMs = 0;
  /** The handler awaits: the event keeps its tag while its worker runs other events. */
  parked = false;
  private expired = false;
  /** Effects produced while parked, held until the event finishes (see `WorkerEffects`). */
  held: unknown[] | null = null;
  /** The event's object transaction, made on first use (src/objects/current.ts). */
  tx?: unknown;
  /**
   * Per-event state of the features built on events, kept here rather than in WeakMaps keyed by
   * the event: a short-lived key makes every young-generation collection trace the map.
   * `call`: the request an API or console event answers, and `heldAnswers` the answers that
   * wait for the event to finish (src/api/worker/answer-sink.ts).
   * `nativeObjects`: the objects a native handler fetched, `nativeAccountCalls` its account
   * calls on their way, and `nativeReplied` whether one of its calls replied to the event's
   * message (src/plugins/native-calls.ts).
   */
  call: unknown = undefined;
  heldAnswers: unknown[] | undefined = undefined;
  nativeObjects: unknown = undefined;
  nativeAccountCalls = 0;
  nativeReplied = false;
  /**
   * Events it invoked that are not queued yet, and counter changes not made yet, in order:
   * they are let go when its synchronous run ends, or, when it has objects, once its changes
   * are durable (src/events/held-counters.ts).
   */
  heldInvokes: Array<HeldInvoke | HeldCounter | HeldTimer> | null = null;
  /** Runs the plugin's handler again (an object conflict); set by whoever calls the plugin. */
  rerun: (() => unknown) | null = null;
  /** The payload the handler got (a rerun gets it again). */
  payload: unknown = undefined;
  /**
   * Answers the event's failure when its object changes are discarded (a network event's error
   * frame to its client, which must go out while everything else the event did is dropped).
   */
  failureReply: ((err: unknown) => void) | null = null;
  /**
   * The plugin handler an engine event runs for (a session message's, a REST route's): its
   * failures that are no handler's throw (a commit that kept conflicting) are logged under it,
   * not under gsf's engine event. Set where a commit can follow.
   */
  owner: { plugin: string; stage: string; subject: string } | null = null;

  constructor(
    private readonly rt: EventHost,
    readonly id: number,
    readonly tag: number,
    /** The kind as `EventKind` numbers it (`kind` names it). */
    readonly kindIndex: number,
    /** Session id, 0 for none. */
    readonly session: number,
    public name: string,
    public nameId: number,
  ) {}

  /**
   * It timed out while it awaited: it may not commit or run again (its result is dropped).
   * Asked before each commit and rerun, so it looks at the thread's timeout notices first: a
   * rerun's backoff timer may fire before the worker's loop has seen them.
   */
  get timedOut(): boolean {
    if (!this.expired && this.parked) this.rt.noticeTimeouts?.();
    return this.expired;
  }

  set timedOut(value: boolean) {
    this.expired = value;
  }

  get kind(): EventKindName {
    return KIND_NAMES[this.kindIndex] ?? 'user';
  }

  get sessionId(): number | null {
    return this.session === 0 ? null : this.session;
  }

  setEventName(name: string): void {
    if (this.rt.current() !== this) throw gsfError('GSF_ERR_BAD_ARGUMENT', 'setEventName must be called while its event runs');
    this.rt.setEventName(name);
  }

  io<T>(work: Promise<T>): Promise<T> {
    return trackIo(this, work);
  }
}

/** Awaits `work`, adding the wait to the event's io-wait time. */
export async function trackIo<T>(ev: RunningEvent, work: Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await work;
  } finally {
    ev.ioWaitMs += performance.now() - start;
  }
}
