/**
 * The game server's AuthenticationClient (SPEC 5.1.3): asks the authenticator agent over HTTP,
 * or, with `use_authenticator` false, answers every request with success. One per thread.
 * - async: `call` (a promise); callback forms build on it (see `plugin-api.ts`);
 * - sync: `callSync` blocks this thread only, while a helper thread does the request.
 * A system error (agent unreachable, timeout, unexpected answer) is a `GsfError` with a
 * `GSF_ERR_AUTH_*` code; any well-formed agent answer, failed or not, is a response.
 */
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { GsfError, gsfError } from '../../errors.ts';
import { agentCall, checkRequest } from './keys.ts';
import { AuthResult, type AuthenticationRequest, type AuthenticationResponse, type PersonalInfoResponse } from '../types.ts';

export type CallKind = 'authentication' | 'personalinfo';
export type CallResponse<K extends CallKind> = K extends 'personalinfo' ? PersonalInfoResponse : AuthenticationResponse;

export interface ClientOptions {
  useAuthenticator: boolean;
  address: string;
  port: number;
  timeoutMs: number;
}

/** Calling thread → sync helper thread: one POST to the agent. */
interface SyncRequest {
  id: number;
  url: string;
  body: string;
  timeoutMs: number;
}

/** Outcome of one HTTP exchange with the agent (sync helper thread → calling thread). */
interface TransportOutcome {
  id: number;
  status?: number;
  text?: string;
  failure?: 'timeout' | 'unreachable';
  detail?: string;
}

const SYNC_HELPER = new URL('./sync-transport.mjs', import.meta.url);

export class AuthenticationClient {
  readonly agent: string;
  private helper: { worker: Worker; port: MessagePort; flag: Int32Array } | null = null;
  private nextId = 1;

  constructor(readonly options: ClientOptions) {
    const host = options.address.includes(':') ? `[${options.address}]` : options.address;
    this.agent = `${host}:${options.port}`;
  }

  /** Asks the agent; resolves with the response, rejects with GSF_ERR_AUTH_* on a system error. */
  async call<K extends CallKind>(kind: K, request: AuthenticationRequest): Promise<CallResponse<K>> {
    checkRequest(request);
    const { path, body } = agentCall(kind, request);
    if (!this.options.useAuthenticator) return succeed(kind);
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    let outcome: TransportOutcome;
    try {
      const res = await fetch(`http://${this.agent}${path}`, {
        method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, signal,
      });
      outcome = { id: 0, status: res.status, text: await res.text() };
    } catch (err) {
      outcome = signal.aborted ? { id: 0, failure: 'timeout' }
        : { id: 0, failure: 'unreachable', detail: (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message };
    }
    return this.toResponse(kind, request, outcome);
  }

  /**
   * Asks the agent and blocks this thread until the answer or the timeout; throws GSF_ERR_AUTH_*
   * on a system error.
   */
  callSync<K extends CallKind>(kind: K, request: AuthenticationRequest): CallResponse<K> {
    checkRequest(request);
    const { path, body } = agentCall(kind, request);
    if (!this.options.useAuthenticator) return succeed(kind);
    const helper = this.syncHelper();
    const id = this.nextId++;
    const timeoutMs = this.options.timeoutMs;
    Atomics.store(helper.flag, 0, 0);
    const message: SyncRequest = { id, url: `http://${this.agent}${path}`, body: JSON.stringify(body), timeoutMs };
    helper.worker.postMessage(message);
    // The helper enforces the timeout itself; the extra margin covers its start-up.
    const deadline = Date.now() + timeoutMs + 5000;
    for (;;) {
      const message = receiveMessageOnPort(helper.port);
      if (message) {
        const outcome = message.message as TransportOutcome;
        if (outcome.id === id) return this.toResponse(kind, request, outcome);
        continue; // the late answer of an earlier call that gave up
      }
      const left = deadline - Date.now();
      if (left <= 0) return this.toResponse(kind, request, { id, failure: 'timeout' });
      Atomics.wait(helper.flag, 0, 0, left);
      Atomics.store(helper.flag, 0, 0);
    }
  }

  /** Stops the sync helper thread, if one was started. */
  close(): Promise<void> {
    const h = this.helper;
    this.helper = null;
    if (!h) return Promise.resolve();
    h.port.close();
    return h.worker.terminate().then(() => undefined);
  }

  private syncHelper(): NonNullable<AuthenticationClient['helper']> {
    if (this.helper) return this.helper;
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(SYNC_HELPER, { workerData: { flag: flag.buffer, port: port2 }, transferList: [port2], execArgv: [] });
    worker.unref();
    port1.unref();
    this.helper = { worker, port: port1, flag };
    return this.helper;
  }

  private toResponse<K extends CallKind>(kind: K, request: AuthenticationRequest, o: TransportOutcome): CallResponse<K> {
    if (o.failure === 'timeout') throw gsfError('GSF_ERR_AUTH_TIMEOUT', this.agent, this.options.timeoutMs);
    if (o.failure === 'unreachable') throw gsfError('GSF_ERR_AUTH_UNREACHABLE', this.agent, o.detail ?? 'connection failed');
    const bad = (why: string): GsfError => gsfError('GSF_ERR_AUTH_BAD_ANSWER', this.agent, why);
    if (o.status === 413) {
      // The request itself is too large for the agent (its max_body_bytes): sending it again
      // gets the same answer, so it is a failed request, not a system error a game would retry.
      const refused: AuthenticationResponse = {
        success: false, reason_code: AuthResult.incorrectParameters, reason_description: 'the request is larger than the agent takes (HTTP 413; its max_body_bytes)',
      };
      return (kind === 'personalinfo' ? { ...refused, friends: [] } : refused) as CallResponse<K>;
    }
    if (o.status !== 200) throw bad(`HTTP ${String(o.status)}`);
    let answer: unknown;
    try {
      answer = JSON.parse(o.text ?? '');
    } catch {
      throw bad('the body is not JSON');
    }
    const a = answer as { result?: unknown; description?: unknown; friends?: unknown };
    if (typeof a !== 'object' || a === null || !Number.isInteger(a.result) || typeof a.description !== 'string') {
      throw bad('no integer result and string description');
    }
    const response: AuthenticationResponse = { success: a.result === 0, reason_code: a.result as number, reason_description: a.description };
    if (kind === 'authentication') return response as CallResponse<K>;
    let friends: PersonalInfoResponse['friends'] = [];
    if (response.success) {
      if (!Array.isArray(a.friends) || a.friends.some((f) => typeof f !== 'string')) throw bad('no friends array of strings');
      friends = (a.friends as string[]).map((id) => ({ platform_type: request.platform_type, id }));
    }
    return { ...response, friends } as CallResponse<K>;
  }
}

function succeed<K extends CallKind>(kind: K): CallResponse<K> {
  const ok: AuthenticationResponse = { success: true, reason_code: 0, reason_description: '' };
  return (kind === 'personalinfo' ? { ...ok, friends: [] } : ok) as CallResponse<K>;
}
