/**
 * The per-thread event runtime: the running event (running-event.ts), `invoke`, naming, held
 * counter changes and timers. The main thread and every worker have one; they share the native queue.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { native, EventKind } from '../native.ts';
import { gsfError } from '../errors.ts';
import type { FlagRegistry } from '../config/flags.ts';
import type { Logger } from '../log/logger.ts';
import { encodePayload } from './codec.ts';
import { childNameId, eventNameTooLong, intern, internEventName, MAX_EVENT_NAME_BYTES, nameOf, reserveHeldId } from './names.ts';
import { workReady } from './wake.ts';
import { invokeStage } from './main/invoke-stage.ts';
import { isValidTag, randomTag, resolveTag, type TagSwitches } from './tags.ts';
import { HeldCounter, HeldTimer, pendingValue } from './held-counters.ts';
import { RunningEvent } from './running-event.ts';
import { checkTimerArgs } from './timer-args.ts';
import type { EventHandler, EventKindName, EventObjects, InvokeOptions, WorkerEffects } from './types.ts';

// Other features import these from here (names.ts and running-event.ts hold them).
export { intern, nameOf };
export { RunningEvent, trackIo, type HeldInvoke } from './running-event.ts';

/** A registered named event. */
export interface HandlerEntry {
  plugin: string;
  event: string;
  id: number;
  fn: EventHandler;
  /** An `async function`: it runs inside the event's async context (see `EventRuntime.current`). */
  async: boolean;
  /** It takes its payload as the raw msgpack bytes (native handlers decode it themselves). */
  rawPayload: boolean;
  /** A native plugin's event handler, which the worker may run without JavaScript (see `runsNatively`). */
  native: NativeEventHandler | null;
}

/**
 * How the worker runs a native plugin's event handler itself (`native.pluginRunEvents`): the
 * plugin's handler index, and what finishes an event whose call returned `outcome` (what the
 * handler function does after its own call).
 */
export interface NativeEventHandler {
  handler: number;
  settle(outcome: unknown, ev: RunningEvent): void | Promise<void>;
}

const nativeHandlers = new WeakMap<object, NativeEventHandler>();

/** Marks `fn`, a native event handler's function, as one the worker may run as `native` says. */
export function runsNatively<F extends object>(fn: F, native: NativeEventHandler): F {
  nativeHandlers.set(fn, native);
  return fn;
}

/** Handlers that take their payload as raw msgpack bytes, not decoded (see `takesRawPayload`). */
const rawPayloadHandlers = new WeakSet<object>();

/**
 * Marks a handler that takes its payload as the raw msgpack bytes (`Uint8Array | null`, valid
 * during the call): a native plugin's handler, which decodes it itself, so the payload is not
 * decoded and encoded again on the way.
 */
export function takesRawPayload<F extends object>(fn: F): F {
  rawPayloadHandlers.add(fn);
  return fn;
}

/** Whether `fn` is declared `async` (its awaits then keep the event as their context). */
export function isAsyncFunction(fn: unknown): boolean {
  return typeof fn === 'function' && (fn as { [Symbol.toStringTag]?: string })[Symbol.toStringTag] === 'AsyncFunction';
}

/**
 * The event whose async handler is running, across its awaits. Only async handlers enter it,
 * so synchronous handlers (the common, fast case) pay nothing for it.
 */
const asyncEvent = new AsyncLocalStorage<RunningEvent>();

export class EventRuntime {
  readonly handlers = new Map<string, HandlerEntry>();
  readonly handlersById = new Map<number, HandlerEntry>();
  /** The event running on this thread synchronously, or null (see `current`). */
  running: RunningEvent | null = null;
  /** Event workers: marks this thread's awaiting events that timed out (see `RunningEvent.timedOut`). */
  noticeTimeouts: (() => void) | null = null;
  /** Set when shutdown starts: events from outside events are refused, but while the onStop hooks run ('hooks'). */
  stopping: boolean | 'hooks' = false;
  /** Effects of events for the main thread (set on workers by the session feature). */
  effects: WorkerEffects | null = null;
  /** The object model, when plugins use it (set by `api.objects`). */
  objects: EventObjects | null = null;
  /** Called when an event is renamed (the worker publishes the name for diagnostics). */
  onRename: ((ev: RunningEvent) => void) | null = null;

  constructor(readonly role: 'main' | 'worker', readonly flags: FlagRegistry, readonly log: Logger) {}

  /** Adds a named event; duplicates are reported by the plugin loader before this. */
  addHandler(plugin: string, event: string, fn: EventHandler): void {
    const entry: HandlerEntry = { plugin, event, id: intern(event), fn, async: isAsyncFunction(fn), rawPayload: rawPayloadHandlers.has(fn),
      native: nativeHandlers.get(fn) ?? null };
    this.handlers.set(event, entry);
    this.handlersById.set(entry.id, entry);
  }

  /**
   * The event whose code is running: the one running synchronously, or, inside an async
   * handler after an await, the event that handler belongs to. Null outside events.
   */
  current(): RunningEvent | null {
    return this.running ?? asyncEvent.getStore() ?? null;
  }

  /**
   * Calls a handler of event `ev`. An async function runs inside the event's async context,
   * so after its awaits `current()` (and with it `invoke`, `setEventName`, session sends)
   * still knows the event.
   */
  call<A, B, C>(async: boolean, ev: RunningEvent, fn: (a: A, b: B, c: C) => unknown, a: A, b: B, c: C): unknown {
    return async ? asyncEvent.run(ev, fn, a, b, c) : fn(a, b, c);
  }

  private switches(): TagSwitches {
    return {
      enable_inheriting_event_tag: this.flags.get<boolean>('enable_inheriting_event_tag'),
      enable_random_event_tag: this.flags.get<boolean>('enable_random_event_tag'),
    };
  }

  private handlerId(event: string): number {
    const entry = this.handlers.get(event);
    if (!entry) throw gsfError('GSF_ERR_UNKNOWN_EVENT', event);
    return entry.id;
  }

  private refuseAfterStop(what: string): void {
    if (this.stopping === true && this.current() === null) throw gsfError('GSF_ERR_SHUTTING_DOWN', what);
  }

  /** Queues a user event (SPEC 6.1 `Invoke`); returns its id. */
  invoke(event: string, payload?: unknown, options: InvokeOptions = {}): number {
    const handlerId = this.handlerId(event); // also the id of the name `event` (addHandler)
    if (options.tag !== undefined && !isValidTag(options.tag)) {
      throw gsfError('GSF_ERR_BAD_ARGUMENT', `invoke: tag must be a non-negative safe integer, got ${String(options.tag)}`);
    }
    if (options.name !== undefined && (typeof options.name !== 'string' || options.name === '')) {
      throw gsfError('GSF_ERR_BAD_ARGUMENT', 'invoke: name must be a non-empty string');
    }
    if (options.name !== undefined && eventNameTooLong(options.name)) {
      throw gsfError('GSF_ERR_BAD_ARGUMENT', `invoke: name must be at most ${MAX_EVENT_NAME_BYTES} bytes in UTF-8`);
    }
    if (this.stopping) this.refuseAfterStop(`invoke('${event}')`);
    const parent = this.current();
    // An event that timed out while it awaited was cancelled: what it does when it resumes is dropped.
    if (parent !== null && parent !== this.running && parent.timedOut) return reserveHeldId();
    const tag = options.tag ?? resolveTag(parent, this.switches());
    // The main thread stages its invokes and hands them over in batches (invoke-stage.ts).
    if (parent === null && this.role === 'main') {
      return invokeStage.addValue(tag, options.name !== undefined ? internEventName(options.name) : handlerId, handlerId, 0, EventKind.user, payload);
    }
    // Encoded first: a payload that cannot be encoded creates no event, and takes no child number.
    const bytes = encodePayload(payload);
    // Every child counts in its parent's creation order (SPEC 6.3), one given a name too.
    let nameId: number;
    if (options.name !== undefined) {
      nameId = internEventName(options.name);
      if (parent !== null) parent.children++;
    } else {
      nameId = parent !== null ? childNameId(parent) : handlerId;
    }
    // Inside an event's synchronous run, or while it has object changes, the child waits for it.
    if (parent !== null && (parent === this.running || parent.tx !== undefined)) {
      const id = reserveHeldId();
      (parent.heldInvokes ??= []).push([tag, nameId, handlerId, parent.session, EventKind.user, bytes, id]);
      return id;
    }
    if (this.role === 'main') return invokeStage.add(tag, nameId, handlerId, parent?.session ?? 0, EventKind.user, bytes);
    // An id from this thread's block too, so ids keep increasing in the thread's invoke order.
    const id = reserveHeldId();
    native.push(tag, nameId, handlerId, parent?.session ?? 0, EventKind.user, bytes, id);
    workReady();
    return id;
  }

  /**
   * Queues an engine event: network messages (session tag), engine callbacks (a random tag
   * each), API-service handlers. Used by engine features, not by plugins.
   */
  invokeEngine(kind: Exclude<EventKindName, 'user' | 'timer'>, event: string, payload: unknown,
    opts: { tag?: number; name?: string; sessionId?: number } = {}): number {
    const handlerId = this.handlerId(event);
    if (this.stopping) this.refuseAfterStop(`${kind} event '${event}'`);
    const tag = opts.tag ?? randomTag();
    invokeStage.flush(); // what the main thread invoked before goes first
    // Its id comes from the same block as this thread's other invokes (increasing in their order).
    const id = this.role === 'main' ? invokeStage.takeId() : reserveHeldId();
    native.push(tag, intern(opts.name ?? event), handlerId, opts.sessionId ?? 0, EventKind[kind], encodePayload(payload), id);
    workReady();
    return id;
  }

  /**
   * Queues the events `ev` invoked and held and makes its held counter changes (its run ended,
   * or its changes are durable).
   */
  releaseInvokes(ev: RunningEvent): void {
    const held = ev.heldInvokes;
    if (held === null) return;
    ev.heldInvokes = null;
    let pushed = false;
    for (const h of held) {
      if (h instanceof HeldCounter || h instanceof HeldTimer) {
        h.apply();
        continue;
      }
      native.push(h[0], h[1], h[2], h[3], h[4], h[5], h[6]);
      pushed = true;
    }
    if (pushed) workReady();
  }

  /** Drops the events `ev` invoked and its counter changes (its object changes were discarded, or it reruns). */
  dropInvokes(ev: RunningEvent): void {
    for (const h of ev.heldInvokes ?? []) {
      if (h instanceof HeldTimer) h.release();
      // A native event that carries user data (object_transact's): it will never run, so the addon releases it.
      else if (!(h instanceof HeldCounter) && h[7] === true) native.pluginRevokeEvent(h[6]);
    }
    ev.heldInvokes = null;
  }

  /** The running event, when a counter change now must wait for it (the rule of `invoke`). */
  private counterHolder(): RunningEvent | null {
    const ev = this.current();
    return ev !== null && (ev === this.running || ev.tx !== undefined) ? ev : null;
  }

  /** The current event timed out while it awaited: its counter changes from now on are dropped. */
  private cancelledNow(): boolean {
    const ev = this.current();
    return ev !== null && ev !== this.running && ev.timedOut;
  }

  /**
   * Adds `amount` to a counter, or holds the addition for the running event (see
   * `heldInvokes`); returns the value as this event sees it (its own held changes included).
   */
  counterIncrease(category: string, name: string, amount: number): number {
    if (this.cancelledNow()) return native.counterReadInt(category, name) ?? 0;
    const ev = this.counterHolder();
    if (ev === null) return native.counterIncrease(category, name, amount);
    const held = ev.heldInvokes ??= [];
    held.push(new HeldCounter(category, name, false, amount, false, undefined));
    return pendingValue(held, category, name) ?? 0;
  }

  /** Sets a counter, or holds the change for the running event. */
  counterUpdate(category: string, name: string, value: number, isDouble: boolean, description?: string): void {
    if (this.cancelledNow()) return;
    const ev = this.counterHolder();
    if (ev === null) native.counterUpdate(category, name, value, isDouble, description);
    else (ev.heldInvokes ??= []).push(new HeldCounter(category, name, true, value, isDouble, description));
  }

  /** A counter's value as the running event sees it (its own held changes included); null when there is none. */
  counterRead(category: string, name: string): number | null {
    const held = this.current()?.heldInvokes;
    if (held === null || held === undefined) return native.counterReadInt(category, name);
    const value = pendingValue(held, category, name);
    return value === null ? null : Math.trunc(value);
  }

  /** Starts a timer whose handler runs as an event on the timer tag. */
  addTimer(delayMs: number, intervalMs: number, event: string, payload?: unknown, name?: string): number {
    checkTimerArgs(event, delayMs, intervalMs, name);
    const handlerId = this.handlerId(event);
    this.refuseAfterStop(`timer '${event}'`);
    // An event that timed out while it awaited starts nothing when it resumes: no timer (id 0).
    if (this.cancelledNow()) return 0;
    const nameId = name !== undefined ? internEventName(name) : handlerId;
    const ev = this.counterHolder();
    if (ev === null) return native.timerAdd(delayMs, intervalMs, nameId, handlerId, encodePayload(payload));
    // Held with the event's other effects: started when its run ends or its changes are durable.
    const held = new HeldTimer(native.timerReserve(), delayMs, intervalMs, nameId, handlerId, encodePayload(payload));
    (ev.heldInvokes ??= []).push(held);
    return held.id;
  }

  /** Renames the running event (SPEC 6.3 `SetEventName`). */
  setEventName(name: string): void {
    const ev = this.current();
    if (!ev) throw gsfError('GSF_ERR_BAD_ARGUMENT', 'setEventName must be called inside an event');
    if (typeof name !== 'string' || name === '') throw gsfError('GSF_ERR_BAD_ARGUMENT', 'setEventName: name must be a non-empty string');
    if (eventNameTooLong(name)) throw gsfError('GSF_ERR_BAD_ARGUMENT', `setEventName: name must be at most ${MAX_EVENT_NAME_BYTES} bytes in UTF-8`);
    ev.name = name;
    ev.nameId = internEventName(name);
    this.onRename?.(ev);
  }
}
