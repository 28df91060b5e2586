/**
 * A native plugin's API-service routes and console registrations (ABI 1.1) on one thread:
 * each hook becomes an API target that calls it through `native.pluginCallApi`, with the
 * request's writer token and kind in the context cells; its answer (given during the call or
 * a continuation) goes through the request's writer, like a managed handler's.
 */
import { native, ContextCell, type NativeApiRegistrations } from '../native.ts';
import { encodePayload } from '../events/codec.ts';
import type { EventRuntime, RunningEvent } from '../events/runtime.ts';
import type { ApiTarget } from '../api/api-event.ts';
import { addRoute } from '../api/plugin-routes.ts';
import { AnswerKind, failureAnswer, nativeAnswer, type ResponseWriter } from '../api/writer.ts';
import { OPERATIONS } from '../console/operations.ts';
import { ConsoleRegistrar } from '../console/registry.ts';
import type { SessionOps } from '../session/ops.ts';
import { contextCells, countCachedReads, settleNativeCall } from './native-calls.ts';

/**
 * V8 keeps a Uint8Array of up to 64 bytes on its own heap, and handing one to native code makes
 * it move the bytes out first (an allocation per call). Small arguments are passed from this
 * buffer instead; the C hook reads them during its call only, and hooks never call back into
 * JavaScript, so one buffer per thread serves every call.
 */
const ON_HEAP_BYTES = 64;
const argsScratch = new Uint8Array(new ArrayBuffer(ON_HEAP_BYTES));

function offHeap(bytes: Uint8Array | null): Uint8Array | null {
  if (bytes === null || bytes.length > ON_HEAP_BYTES) return bytes;
  argsScratch.set(bytes);
  return argsScratch.subarray(0, bytes.length);
}

/** The target that runs native API hook `entry` as `operation`, answering `kind`. */
function nativeTarget(rt: EventRuntime, plugin: string, ops: SessionOps, entry: number, operation: string, kind: number): ApiTarget['run'] {
  return (args, res: ResponseWriter, ev: RunningEvent) => {
    const c = contextCells(ev);
    c[ContextCell.requestId] = res.requestId;
    c[ContextCell.answerKind] = kind;
    const space = res.label.indexOf(' ');
    const out = native.pluginCallApi(entry, offHeap(args instanceof Uint8Array ? args : encodePayload(args)),
      `${operation}\n${res.label.slice(0, space)}\n${res.label.slice(space + 1)}`);
    countCachedReads(ev);
    // The hook's only effect was its request's JSON answer: the body alone.
    if (typeof out === 'string') {
      res.deliverNative([res.requestId, 200, out]);
      return undefined;
    }
    return settleNativeCall(out, {
      rt, ev, ops, log: rt.log, plugin, what: 'API handler', name: operation,
      // Methods, not arrow properties: no per-call function naming on this path.
      answer(rid, status, body, message) { res.deliverNative(nativeAnswer(rid, status, body, message)); },
      // A hook that returned a failing status before answering: the request fails with that status.
      onFailure(_id, status, message) { if (!res.answered) res.deliverNative(failureAnswer(res.requestId, status, message)); },
    });
  };
}

/** Registers what a native plugin registered for the API service and the console, on this thread. */
export function registerNativeApi(rt: EventRuntime, plugin: string, api: NativeApiRegistrations, ops: SessionOps): void {
  for (const r of api.routes) {
    addRoute(rt, plugin, r.method, r.path, r.name === '' ? undefined : r.name,
      nativeTarget(rt, plugin, ops, r.entry, 'route', AnswerKind.any), true);
  }
  const console = new ConsoleRegistrar(rt, 'native', plugin);
  for (const [place, entry] of api.operations) {
    const op = OPERATIONS.find((o) => o.native === place);
    if (op) console.operation(op.method, nativeTarget(rt, plugin, ops, entry, op.name, op.answer));
  }
  if (api.editableAccount.length > 0) console.editable('account', api.editableAccount);
  if (api.editableCharacter.length > 0) console.editable('character', api.editableCharacter);
  if (api.giftable.length > 0) console.giftable(api.giftable);
  if (api.noticeCategories.length > 0) console.noticeCategories(api.noticeCategories);
  if (api.missionNormal.length + api.missionAchievement.length > 0) console.missionCategories(api.missionNormal, api.missionAchievement);
  for (const c of api.campaigns) {
    console.campaign(c.type, nativeTarget(rt, plugin, ops, c.begin, 'BeginCampaign', AnswerKind.void),
      nativeTarget(rt, plugin, ops, c.end, 'EndCampaign', AnswerKind.void));
  }
  for (const q of api.queries) {
    console.customQuery(q.name, q.method, q.uri, q.requestFields, q.responseFields, nativeTarget(rt, plugin, ops, q.entry, 'CustomQuery', AnswerKind.json));
  }
}
