/**
 * `api.auth`: the AuthenticationClient as plugins use it, in the three forms of SPEC 4.1.
 * Closures cannot cross threads, so the callback form names a registered event: when the answer
 * (or a system error) arrives, that event is queued as an engine event with a random tag
 * (SPEC 6.1, 6.2.3) and an `AuthCallbackPayload`.
 */
import { GsfError, describeError, gsfError } from '../../errors.ts';
import { encodePayload } from '../../events/codec.ts';
import { trackIo, type EventRuntime } from '../../events/runtime.ts';
import { awaitedAnswers } from '../../events/wake.ts';
import type { FlagRegistry } from '../../config/flags.ts';
import { AuthenticationClient, type CallKind, type CallResponse } from './client.ts';
import { agentCall, checkRequest } from './keys.ts';
import type { AuthCallbackPayload, AuthenticationRequest, AuthenticationResponse, PersonalInfoRequest, PersonalInfoResponse } from '../types.ts';

export interface AuthApi {
  /** Whether requests go to the agent (`use_authenticator`); false: every request succeeds. */
  readonly usesAuthenticator: boolean;
  /**
   * Authenticates; when the answer arrives, `callbackEvent` runs as an engine event (random tag)
   * with `{request, response, error, context}`. `error` true is a system error.
   */
  authenticate<C = unknown>(request: AuthenticationRequest, callbackEvent: string, context?: C): void;
  /** As `authenticate`, for the friend list (`response.friends`). */
  getPersonalInfo<C = unknown>(request: PersonalInfoRequest, callbackEvent: string, context?: C): void;
  /** Resolves with the response; rejects with a `GSF_ERR_AUTH_*` GsfError on a system error. Inside an event the wait counts as io-wait. */
  authenticateAsync(request: AuthenticationRequest): Promise<AuthenticationResponse>;
  getPersonalInfoAsync(request: PersonalInfoRequest): Promise<PersonalInfoResponse>;
  /** Blocks this thread (an event worker: only that worker) until the answer; false on a system error. */
  authenticateSync(request: AuthenticationRequest): AuthenticationResponse | false;
  getPersonalInfoSync(request: PersonalInfoRequest): PersonalInfoResponse | false;
  /** The system error behind this thread's last sync call that returned false, or null. */
  lastSyncError(): GsfError | null;
}

let client: AuthenticationClient | null = null;
let lastError: GsfError | null = null;

/** This thread's client, configured from the AuthenticationClient flags. */
export function threadClient(flags: FlagRegistry): AuthenticationClient {
  client ??= new AuthenticationClient({
    useAuthenticator: flags.get<boolean>('use_authenticator'),
    address: flags.get<string>('remote_authenticator_ip_address'),
    port: flags.get<number>('remote_authenticator_port'),
    timeoutMs: flags.get<number>('authenticator_request_timeout_in_ms'),
  });
  return client;
}

/** Stops this thread's client (its sync helper thread), e.g. when a server stops. */
export async function closeThreadClient(): Promise<void> {
  const c = client;
  client = null;
  await c?.close();
}

export function createAuthApi(rt: EventRuntime): AuthApi {
  const get = (): AuthenticationClient => threadClient(rt.flags);

  const withCallback = (kind: CallKind, request: AuthenticationRequest, callbackEvent: string, context: unknown): void => {
    checkRequest(request);
    // A request the client cannot send (personal info for ipaddress) is thrown at once, as a
    // malformed one is: a callback with `error` true would tell the game to try again later.
    agentCall(kind, request);
    if (typeof callbackEvent !== 'string' || !rt.handlers.has(callbackEvent)) {
      throw gsfError('GSF_ERR_UNKNOWN_EVENT', String(callbackEvent));
    }
    // The context travels in the callback event's payload: one that cannot be encoded is
    // refused now, not found out when the answer has come and its callback cannot be queued.
    if (context !== undefined) {
      try {
        encodePayload(context);
      } catch (err) {
        throw gsfError('GSF_ERR_BAD_ARGUMENT', `${kind === 'authentication' ? 'authenticate' : 'getPersonalInfo'}: context cannot be encoded (${describeError(err).replace(/^the payload cannot be encoded: /, '')})`);
      }
    }
    const deliver = (payload: AuthCallbackPayload<unknown>): void => {
      if (context !== undefined) payload.context = context;
      try {
        rt.invokeEngine('engine', callbackEvent, payload);
      } catch (err) {
        rt.log.error(`authentication callback '${callbackEvent}' was not queued: ${describeError(err)}`);
      } finally {
        awaitedAnswers(-1);
      }
    };
    // Its answer will be an event: a stop drains it too.
    awaitedAnswers(1);
    let work: Promise<CallResponse<CallKind>>;
    try {
      work = get().call(kind, request);
    } catch (err) {
      awaitedAnswers(-1);
      throw err;
    }
    work.then(
      (response) => deliver({ request, response, error: false }),
      (err: unknown) => deliver({
        request, response: null, error: true,
        error_code: err instanceof GsfError ? err.code : 'GSF_ERR_INTERNAL', error_message: describeError(err),
      }),
    );
  };

  const promised = <K extends CallKind>(kind: K, request: AuthenticationRequest): Promise<CallResponse<K>> => {
    const work = get().call(kind, request);
    const ev = rt.running;
    return ev ? trackIo(ev, work) : work;
  };

  const blocking = <K extends CallKind>(kind: K, request: AuthenticationRequest): CallResponse<K> | false => {
    const ev = rt.running;
    const start = performance.now();
    try {
      const response = get().callSync(kind, request);
      lastError = null;
      return response;
    } catch (err) {
      if (!(err instanceof GsfError) || !err.code.startsWith('GSF_ERR_AUTH_')) throw err;
      lastError = err;
      rt.log.warn(`${err.code}: ${err.message}`);
      return false;
    } finally {
      if (ev) ev.ioWaitMs += performance.now() - start;
    }
  };

  return {
    get usesAuthenticator() {
      return rt.flags.get<boolean>('use_authenticator');
    },
    authenticate: (request, callbackEvent, context) => withCallback('authentication', request, callbackEvent, context),
    getPersonalInfo: (request, callbackEvent, context) => withCallback('personalinfo', request, callbackEvent, context),
    authenticateAsync: (request) => promised('authentication', request),
    getPersonalInfoAsync: (request) => promised('personalinfo', request),
    authenticateSync: (request) => blocking('authentication', request),
    getPersonalInfoSync: (request) => blocking('personalinfo', request),
    lastSyncError: () => lastError,
  };
}
