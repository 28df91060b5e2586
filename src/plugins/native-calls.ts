/**
 * Carrying out what a native call produced, for the event it ran in: its frames and log lines,
 * its API answer, and its object requests (ABI 1.1). Fetches run on the event's transaction;
 * each fetch's continuation then runs with the object, in the same event, and may produce more.
 * While fetches are pending the handler's result is a promise, so the event awaits (holding its
 * tag) and commits its object changes once its last continuation has returned.
 */
import { native, ContextCell, EffectKind, NATIVE_STATUS_NAMES, NativeStatus, type NativeCallOutcome } from '../native.ts';
import { decodePayload, encodePayload } from '../events/codec.ts';
import { intern, type EventRuntime, type RunningEvent } from '../events/runtime.ts';
import { HeldTimer } from '../events/held-counters.ts';
import { holdNativeInvoke, holdNativeTimer } from './native-held.ts';
import type { Logger } from '../log/logger.ts';
import { PluginError, describeError } from '../errors.ts';
import { NativeFailure } from '../events/failure.ts';
import { transactionOf } from '../objects/current.ts';
import type { ObjectHandle } from '../objects/object-handle.ts';
import type { Transaction } from '../objects/transaction.ts';
import type { SessionOps } from '../session/ops.ts';
import { AccountAnswer, applySessionEffect, continueAccount } from './native-sessions.ts';
import { RESULT_CONTINUATION_BASE, ResultAnswer, applyServiceEffect, continueResult, type ServiceCaller } from './native-results.ts';

/** Who made a call and what to do with its answers and failures. */
export interface NativeCallEnv {
  rt: EventRuntime;
  ev: RunningEvent;
  ops: SessionOps;
  log: Logger;
  /** `plugin '<p>' <what> '<name>' failed: …` */
  plugin: string;
  what: string;
  name: string;
  /** The answer of the API request the call handles. */
  answer?(rid: number, status: number, body: string | null, message: string): void;
  /** A failing status (not a timeout): the client learns its request failed (a message's request id, the status, the message). */
  onFailure?(messageId: number | undefined, status: number, message: string): void;
}

/**
 * A fetch a call asked for: answered at once (cache, own objects, a synchronous read) or later;
 * or an account call (ABI 1.2), answered later, whose continuation is kept negated.
 */
type Answer = ObjectHandle | null | AccountAnswer | ResultAnswer;
type Fetch = [continuation: number, result: Answer | Promise<Answer>];

/** The continuation of an account change nobody waits for: the event waits, nothing runs. */
const NO_CONTINUATION = 0;

/** Forgets a pending continuation (object, account or result) that will not run. */
function drop(continuation: number): void {
  if (continuation === NO_CONTINUATION) return;
  if (continuation < 0) native.pluginDropAccountContinuation(-continuation);
  else if (continuation >= RESULT_CONTINUATION_BASE) native.pluginDropResultContinuation(continuation);
  else native.pluginDropContinuation(continuation);
}

/** This thread's context cells. */
let cells: Float64Array | null = null;

// Module bindings are getters under the CommonJS transform event workers load with: the ones
// used per call are read once.
const { eventId: C_EVENT_ID, tag: C_TAG, kind: C_KIND, sessionId: C_SESSION_ID, nameId: C_NAME_ID } = ContextCell;
const { objectReads: C_OBJECT_READS, readsAnswered: C_READS_ANSWERED, readsNone: C_READS_NONE, accountReads: C_ACCOUNT_READS } = ContextCell;
const C_REPLIED = ContextCell.replied, C_CHILDREN = ContextCell.children;
const internName = intern;

/** Writes the event's fields into this thread's context cells before a native call. */
export function contextCells(ev: RunningEvent): Float64Array {
  const c = cells ??= new Float64Array(native.pluginContextView());
  c[C_EVENT_ID] = ev.id;
  c[C_TAG] = ev.tag;
  c[C_KIND] = ev.kindIndex;
  c[C_SESSION_ID] = ev.sessionId ?? 0;
  c[C_NAME_ID] = ev.nameId ?? internName(ev.name);
  // The cache's copy is what a read would give only while the event holds no objects of its own.
  const tx = ev.tx as Transaction | undefined;
  c[C_OBJECT_READS] = tx === undefined || tx.holdsNothing() ? 1 : 0;
  c[C_READS_ANSWERED] = c[C_READS_NONE] = 0;
  // An account_of answered from the session accounts must not overtake the event's own account calls.
  c[C_ACCOUNT_READS] = ev.nativeAccountCalls === 0 ? 1 : 0;
  // Its default child names go on from what its earlier calls and handlers created (SPEC 6.3).
  c[C_CHILDREN] = ev.children;
  return c;
}

/**
 * Counts, in the event's object figures, the reads the last native call had answered from the
 * cache in native code; notes whether the call replied to the event's message, and the event's
 * child count the call brought it to.
 */
export function countCachedReads(ev: RunningEvent): void {
  // The worker may have run the call itself (pluginRunEvents), before any contextCells here.
  const c = cells ??= new Float64Array(native.pluginContextView());
  ev.children = c[C_CHILDREN]!;
  if (c[C_REPLIED] !== 0) {
    c[C_REPLIED] = 0;
    ev.nativeReplied = true;
  }
  const answered = c[C_READS_ANSWERED]!;
  if (answered === 0) return;
  const none = c[C_READS_NONE]!;
  c[C_READS_ANSWERED] = c[C_READS_NONE] = 0;
  transactionOf(ev).countCachedReads(answered, none);
}

/** The objects a native handler fetched in its event, by type and id. */
function fetchedBy(ev: RunningEvent): Map<string, ObjectHandle> | undefined {
  return ev.nativeObjects as Map<string, ObjectHandle> | undefined;
}

export function remember(ev: RunningEvent, h: ObjectHandle): void {
  let map = fetchedBy(ev);
  if (!map) ev.nativeObjects = map = new Map();
  map.set(`${h.type}\u0000${h.id}`, h);
}

/** What a service request needs of the call (native-results.ts). */
function serviceCaller(env: NativeCallEnv): ServiceCaller {
  const ev = env.ev;
  return {
    rt: env.rt, ev, plugin: env.plugin, log: env.log,
    objectOf: (type, id) => fetchedBy(ev)?.get(`${type}\u0000${id}`),
    remember: (h) => remember(ev, h),
  };
}

/** Applies an object_set: fields of an object the event fetched for write. */
function setFields(ev: RunningEvent, type: string, id: string, fields: Uint8Array): void {
  const h = fetchedBy(ev)?.get(`${type}\u0000${id}`);
  if (h === undefined || !h.forWrite) {
    throw new Error(`object_set: ${type} '${id}' was not fetched for write (GSF_OBJECT_WRITE) in this event`);
  }
  const values = decodePayload(fields, 0, fields.length) as Record<string, unknown>;
  for (const [field, value] of Object.entries(values)) h.set(field, value);
}

/**
 * Carries out a call's outcome: effects now, continuations after their fetches. Throws (or
 * rejects) with the call's failure; continuations of a failed call are dropped.
 */
export function settleNativeCall(outcome: NativeCallOutcome, env: NativeCallEnv): void | Promise<void> {
  if (outcome === null) return undefined;
  const pending: Fetch[] = [];
  carryOut(outcome, env, pending);
  return pending.length === 0 ? undefined : continueAfter(pending, env);
}

/**
 * Carries out one call's outcome and pushes the fetches it asked for onto `pending`, last first,
 * so its first fetch is the next popped. Throws with the call's failure; its own fetches are then
 * dropped (those already pending are the caller's to drop).
 */
function carryOut(outcome: NativeCallOutcome, env: NativeCallEnv, pending: Fetch[]): void {
  if (outcome === null) return;
  if (typeof outcome === 'string' || outcome instanceof Uint8Array) {
    env.ops.sendFrame(env.ev.sessionId ?? 0, outcome);
    return;
  }
  const start = pending.length;
  let failure: unknown;
  const succeeded = Array.isArray(outcome);
  try {
    applyAll(succeeded ? outcome : outcome.effects, env, pending);
  } catch (err) {
    failure = err;
    // What the handler asked for could not be done (an object refused, say): its client or
    // request learns it failed, as when the handler itself fails.
    env.onFailure?.(succeeded ? undefined : outcome.messageId, NativeStatus.internal, describeError(err));
  }
  if (failure === undefined && !succeeded && outcome.status !== NativeStatus.ok) {
    if (outcome.status !== NativeStatus.expired) env.onFailure?.(outcome.messageId, outcome.status, outcome.error);
    const status = NATIVE_STATUS_NAMES[outcome.status] ?? `status ${outcome.status}`;
    // Names the plugin, the handler and set_error's text; no JavaScript stack (only gsf's frames).
    failure = new PluginError(env.plugin, env.what, new NativeFailure(`${status}${outcome.error ? `: ${outcome.error}` : ''}`), { subject: env.name });
  }
  if (failure !== undefined) {
    for (let i = start; i < pending.length; i++) drop(pending[i]![0]);
    pending.length = start;
    // The event fails: continuations asked for by effects after the one that failed were never
    // read here, and no continuation of it will run; the native side releases them all.
    native.pluginDropContinuations(env.ev.id);
    throw failure;
  }
  // Most calls ask for one fetch or none.
  for (let i = start, j = pending.length - 1; i < j; i++, j--) {
    const f = pending[i]!;
    pending[i] = pending[j]!;
    pending[j] = f;
  }
}

/**
 * Runs the pending continuations, depth first: what a continuation fetches runs before the
 * fetches after it. A loop over one stack, not a call per continuation, so a handler that walks a
 * long list one cached fetch at a time runs in constant stack. Fetches answered at once continue
 * at once, in the handler's own call, so a handler whose objects are cached never parks its
 * event; the first fetch that must wait turns the rest into a promise.
 */
function continueAfter(pending: Fetch[], env: NativeCallEnv): void | Promise<void> {
  while (pending.length > 0) {
    const [continuation, h] = pending[pending.length - 1]!;
    if (h instanceof Promise) return continueLater(pending, env);
    pending.pop();
    if (continuation === NO_CONTINUATION) continue;
    try {
      let out: NativeCallOutcome;
      if (h instanceof AccountAnswer) {
        contextCells(env.ev);
        out = continueAccount(-continuation, h);
      } else if (h instanceof ResultAnswer) {
        contextCells(env.ev);
        out = continueResult(continuation, h);
      } else {
        if (h !== null) remember(env.ev, h);
        contextCells(env.ev);
        out = native.pluginContinue(continuation, h !== null, h?.id ?? '', h === null ? null : encodePayload(h.toJSON()));
      }
      countCachedReads(env.ev);
      carryOut(out, env, pending);
    } catch (err) {
      dropAll(pending);
      throw err;
    }
  }
  return undefined;
}

async function continueLater(pending: Fetch[], env: NativeCallEnv): Promise<void> {
  const top = pending[pending.length - 1]!;
  try {
    top[1] = await top[1];
  } catch (err) {
    dropAll(pending);
    throw err;
  }
  // The event timed out while it waited: its continuations never run (gsf released them then).
  if (env.ev.timedOut) {
    dropAll(pending);
    return;
  }
  // After the wait the event's async context is entered again, as the first call had it.
  await env.rt.call(true, env.ev, continueAfter, pending, env, undefined);
}

/** Drops every pending continuation (the event failed: none of them will run). */
function dropAll(pending: Fetch[]): void {
  for (const [continuation] of pending) drop(continuation);
  pending.length = 0;
}

function mode(value: unknown): 'read' | 'write' {
  return value === 1 ? 'write' : 'read';
}

/** Collects a fetch a call asked for. */
function fetched(fetches: Fetch[], continuation: number, result: Answer | Promise<Answer>): void {
  if (result instanceof Promise) result.catch(() => undefined); // awaited in order later; a failure meanwhile is not unhandled
  fetches.push([continuation, result]);
}

/** The event object_transact queues; its payload is [transaction key, plugin name]. */
export const NATIVE_TRANSACT_EVENT = '_native.transact';
let transactId = 0;
/** The handler id of object_transact's events (`_native.transact`). */
const transactHandler = (): number => (transactId ||= intern(NATIVE_TRANSACT_EVENT));

/** Applies the flat effects array of a native call (see EffectKind); fetches are started and collected. */
function applyAll(effects: unknown[], env: NativeCallEnv, fetches: Fetch[]): void {
  for (let i = 0; i < effects.length;) {
    switch (effects[i]) {
      case EffectKind.send:
        env.ops.sendFrame(effects[i + 1] as number, effects[i + 2] as string | Uint8Array);
        i += 3;
        break;
      case EffectKind.publish:
        env.ops.publishFrames(effects[i + 1] as string, effects[i + 2] as string, effects[i + 3] as Uint8Array);
        i += 4;
        break;
      case EffectKind.log:
        writeLine(env.log, effects[i + 1] as number, effects[i + 2] as string);
        i += 3;
        break;
      case EffectKind.apiAnswer:
        if (env.answer) env.answer(effects[i + 1] as number, effects[i + 2] as number, effects[i + 3] as string | null, effects[i + 4] as string);
        i += 5;
        break;
      case EffectKind.objectFetch: {
        const tx = transactionOf(env.ev);
        fetched(fetches, effects[i + 1] as number, tx.fetchNow(effects[i + 2] as string, effects[i + 3] as string, mode(effects[i + 4])));
        i += 5;
        break;
      }
      case EffectKind.objectFetchBy: {
        const tx = transactionOf(env.ev);
        const key = effects[i + 4] as Uint8Array;
        fetched(fetches, effects[i + 1] as number, tx.fetchByNow(effects[i + 2] as string, effects[i + 3] as string, decodePayload(key, 0, key.length), mode(effects[i + 5])));
        i += 6;
        break;
      }
      case EffectKind.objectSet:
        setFields(env.ev, effects[i + 1] as string, effects[i + 2] as string, effects[i + 3] as Uint8Array);
        i += 4;
        break;
      case EffectKind.objectHeld:
        remember(env.ev, transactionOf(env.ev).heldFromCache(effects[i + 1] as string, effects[i + 2] as string, effects[i + 3] as number, effects[i + 4] as Uint8Array));
        i += 5;
        break;
      case EffectKind.invoke:
        holdNativeInvoke(env.rt, env.ev, effects[i + 2] as number, effects[i + 4] as number, effects[i + 5] as number,
          effects[i + 3] as number, effects[i + 6] as Uint8Array | null, effects[i + 1] as number, effects[i + 5] === transactHandler());
        i += 7;
        break;
      case EffectKind.timer:
        holdNativeTimer(env.rt, env.ev, new HeldTimer(effects[i + 1] as number, effects[i + 2] as number, effects[i + 3] as number,
          effects[i + 4] as number, effects[i + 5] as number, effects[i + 6] as Uint8Array | null));
        i += 7;
        break;
      default: {
        // ABI 1.2 service requests (objects, cluster, authenticator): their continuations' ids lie above the others'.
        const service = applyServiceEffect(effects, i, serviceCaller(env), (continuation, answer) => fetched(fetches, continuation, answer));
        if (service >= 0) {
          i = service;
          break;
        }
        // ABI 1.2 session and account records; an account call's continuation is kept negated.
        const next = applySessionEffect(effects, i, env.ops, (continuation, answer) => accountCall(env, fetches, continuation, answer));
        if (next < 0) throw new Error(`native effects: unknown record ${String(effects[i])}`);
        i = next;
      }
    }
  }
}

/**
 * An account call of the event: counted while on its way (the addon answers the event's
 * account_of itself only when none is), its answer collected for its continuation, or a failure
 * nobody waits for logged.
 */
function accountCall(env: NativeCallEnv, fetches: Fetch[], continuation: number, answer: Promise<AccountAnswer>): void {
  const ev = env.ev;
  ev.nativeAccountCalls++;
  const settled = (): void => {
    ev.nativeAccountCalls--;
  };
  answer.then(settled, settled);
  if (continuation !== 0) fetched(fetches, -continuation, answer);
  else {
    // Nobody waits for the answer, but the event does: the next event of its tag (the session's
    // next message) then sees the change, whichever thread it runs on. A failure is logged.
    const failed = (err: unknown): null => {
      env.log.warn(`native account call failed: ${(err as Error).message}`);
      return null;
    };
    fetched(fetches, NO_CONTINUATION, answer.then(() => null, failed));
  }
}

/** A native log line at its level (negative: verbose level). */
export function writeLine(log: Logger, level: number, line: string): void {
  if (level >= 2) log.error(line);
  else if (level === 1) log.warn(line);
  else if (level === 0) log.info(line);
  else log.vlog(-level, line);
}
