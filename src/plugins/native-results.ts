/**
 * ABI 1.2 service requests of native plugins (object creates and deletes, cluster and
 * authenticator calls): the `serviceRequest` records of a native call's effects, carried out
 * through the managed API (the event's transaction, `api.cluster`, `api.auth`); an answer
 * (`ResultAnswer`) then runs the call's gsf_on_result continuation in the same event
 * (`native-calls.ts`). Also the declarations a native plugin made in init (flags, callable
 * counters, monitors), made through its managed plugin API so that reloads and REST treat them
 * as a managed plugin's.
 */
import { native, EffectKind, NativeStatus, type NativeCallOutcome } from '../native.ts';
import { GsfError, describeError } from '../errors.ts';
import { decodePayload, encodePayload } from '../events/codec.ts';
import type { EventRuntime, RunningEvent } from '../events/runtime.ts';
import type { Logger } from '../log/logger.ts';
import { pluginApiPart } from '../hooks/plugin-api-parts.ts';
import { transactionOf } from '../objects/current.ts';
import type { ObjectHandle } from '../objects/object-handle.ts';
import type { AuthenticationRequest } from '../auth/types.ts';
import type { FlagSpec, PluginApi } from './types.ts';

/** `ServiceOp` of native/core/plugin_results.h. */
export const ServiceOp = { create: 1, delete: 2, clusterInvoke: 3, sendToAccount: 4, authenticate: 5, personalInfo: 6 } as const;

/** Result continuations' ids start here (ResultHost::kFirstContinuation): above object continuations'. */
export const RESULT_CONTINUATION_BASE = 2 ** 48;

/** A request's answer, waiting to run its continuation (see gsf_type_call_result). */
export class ResultAnswer {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly message: string,
    readonly id: string,
    readonly value: Uint8Array | null,
    readonly number: number,
  ) {}

  static ok(id: string, value: Uint8Array | null, number: number): ResultAnswer {
    return new ResultAnswer(NativeStatus.ok, '', '', id, value, number);
  }

  /** A managed call's failure as gsf_plugin.h maps it: the status, the GSF_ERR_* code, the message. */
  static failed(err: unknown): ResultAnswer {
    // A call answered by the main thread keeps its code across the channel on a plain Error.
    const carried = (err as { code?: unknown } | null)?.code;
    const code = err instanceof GsfError ? err.code : typeof carried === 'string' && carried.startsWith('GSF_ERR_') ? carried : 'GSF_ERR_INTERNAL';
    return new ResultAnswer(statusOfCode(code), code, describeError(err), '', null, 0);
  }
}

/** The status a managed error code maps to (docs/reference/c-abi.md, "Results"). */
export function statusOfCode(code: string): number {
  switch (code) {
    case 'GSF_ERR_OBJECT_STATE':
    case 'GSF_ERR_OBJECT_CONFLICT':
      return NativeStatus.conflict;
    case 'GSF_ERR_OBJECT_VALUE':
    case 'GSF_ERR_BAD_ARGUMENT':
      return NativeStatus.invalidArgument;
    case 'GSF_ERR_CLUSTER_UNKNOWN_SERVER':
    case 'GSF_ERR_CLUSTER_NOT_FOUND':
    case 'GSF_ERR_UNKNOWN_EVENT':
      return NativeStatus.notFound;
    case 'GSF_ERR_CLUSTER_TIMEOUT':
    case 'GSF_ERR_CLUSTER_UNAVAILABLE':
    case 'GSF_ERR_CLUSTER_OFF':
    case 'GSF_ERR_AUTH_UNREACHABLE':
    case 'GSF_ERR_AUTH_TIMEOUT':
    case 'GSF_ERR_NOT_ON_WORKER':
      return NativeStatus.unavailable;
    default:
      return NativeStatus.internal;
  }
}

/** Runs a result continuation with its answer (the event's context cells written by the caller). */
export function continueResult(continuation: number, a: ResultAnswer): NativeCallOutcome {
  return native.pluginContinueResult(continuation, a.status, a.code, a.message, a.id, a.value, a.number);
}

/** What carrying out a request needs of the call that made it. */
export interface ServiceCaller {
  rt: EventRuntime;
  ev: RunningEvent;
  plugin: string;
  log: Logger;
  /** An object the event holds by type and id (fetched or created), to set or delete. */
  objectOf(type: string, id: string): ObjectHandle | undefined;
  /** Keeps an object the event created, as a fetched one is kept. */
  remember(h: ObjectHandle): void;
}

function bytesOf(value: unknown): Uint8Array {
  return encodePayload(value) ?? new Uint8Array([0xc0]);
}

/** A request carried out through the managed API: its answer, or its failure as an answer. */
function answered<T>(work: () => Promise<T>, ok: (value: T) => ResultAnswer): Promise<ResultAnswer> {
  let p: Promise<T>;
  try {
    p = work();
  } catch (err) {
    return Promise.resolve(ResultAnswer.failed(err));
  }
  return p.then(ok, (err: unknown) => ResultAnswer.failed(err));
}

/**
 * Carries out the service request at `effects[i]` and returns the index after it, or -1 when the
 * record is not one. An answer for a continuation goes to `pending`; a failure nobody waits for
 * fails the call (creates, deletes) or is logged (cluster and authenticator calls).
 */
export function applyServiceEffect(effects: unknown[], i: number, caller: ServiceCaller,
  pending: (continuation: number, answer: ResultAnswer | Promise<ResultAnswer>) => void): number {
  if (effects[i] !== EffectKind.serviceRequest) return -1;
  const continuation = effects[i + 1] as number;
  const op = effects[i + 2] as number;
  const bytes = effects[i + 3] as Uint8Array;
  const args = decodePayload(bytes, 0, bytes.length) as unknown[];
  const { rt, ev, plugin } = caller;
  let answer: ResultAnswer | Promise<ResultAnswer>;
  switch (op) {
    case ServiceOp.create: {
      const [type, id, fields] = args as [string, string | null, Record<string, unknown> | null];
      try {
        const h = transactionOf(ev).create(type, fields ?? {}, id === null ? undefined : { id });
        caller.remember(h);
        answer = ResultAnswer.ok(h.id, bytesOf(h.toJSON()), 0);
      } catch (err) {
        if (continuation === 0) throw err;
        answer = ResultAnswer.failed(err);
      }
      break;
    }
    case ServiceOp.delete: {
      const [type, id] = args as [string, string];
      const h = caller.objectOf(type, id);
      if (h === undefined) throw new Error(`object_delete: ${type} '${id}' was not fetched or created in this event`);
      transactionOf(ev).delete(h);
      return i + 4;
    }
    case ServiceOp.clusterInvoke: {
      const [server, event, payload, tag, name] = args as [string, string, unknown, number | null, string | null];
      const options = { tag: tag ?? undefined, name: name ?? undefined };
      answer = answered(() => pluginApiPart('cluster', plugin, rt).invoke(server, event, payload ?? undefined, options),
        (eventId) => ResultAnswer.ok(server, null, eventId));
      break;
    }
    case ServiceOp.sendToAccount: {
      const [account, type, body] = args as [string, string, unknown];
      answer = answered(() => pluginApiPart('cluster', plugin, rt).sendToAccount(account, type, body ?? undefined),
        (sent) => ResultAnswer.ok('', null, sent ? 1 : 0));
      break;
    }
    case ServiceOp.authenticate:
    case ServiceOp.personalInfo: {
      const request = args[0] as AuthenticationRequest;
      const auth = (): ReturnType<PluginApi['auth']['authenticateAsync']> => {
        const api = pluginApiPart('auth', plugin, rt);
        return op === ServiceOp.authenticate ? api.authenticateAsync(request) : api.getPersonalInfoAsync(request);
      };
      answer = answered(auth, (response) => ResultAnswer.ok('', bytesOf(response), 0));
      break;
    }
    default:
      throw new Error(`native effects: unknown service request ${String(op)}`);
  }
  if (continuation !== 0) pending(continuation, answer);
  else if (answer instanceof Promise) {
    void answer.then((a) => {
      if (a.status !== NativeStatus.ok) caller.log.warn(`plugin '${plugin}': a native request nobody waits for failed: ${a.code}: ${a.message}`);
    });
  }
  return i + 4;
}

const FLAG_TYPES: FlagSpec['type'][] = ['bool', 'int32', 'uint64', 'double', 'string'];

/** Makes what a native copy declared in init through its managed plugin API (flags, callable counters, monitors). */
export function registerNativeDeclarations(api: PluginApi, path: string): void {
  const d = native.pluginDeclarations(path);
  for (const [name, type, value, desc] of d.flags) {
    api.flags.define(name, { type: FLAG_TYPES[type]!, default: decodePayload(value, 0, value.length) as boolean | number | string, desc });
  }
  for (const [index, category, name, description] of d.callables) {
    api.counters.registerCallable(category, name, description, () => native.pluginReadCounter(index));
  }
  for (const [category, name, threshold] of d.monitors) api.counters.monitor(category, name, threshold);
}
