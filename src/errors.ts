/**
 * The one table of gsf error codes: the server's own, the client protocol's (`_error` frames)
 * and the native addon's. Each entry has a default message and where it surfaces: an HTTP
 * status, a protocol frame, a start error, the plugin API or the native boundary. Templates use
 * `%s` placeholders filled in order. The "Error codes" table of docs/reference/errors.md is
 * checked against this one by a test, so the two cannot drift apart.
 *
 * This module imports nothing, so the client SDK (browsers included) can share it.
 */

/** Where an error surfaces, for the entries that have no HTTP status. */
export type ErrorUse = 'http' | 'protocol' | 'start' | 'plugin' | 'event' | 'auth' | 'native';

export interface ErrorSpec {
  /** Default message template (`%s` placeholders). */
  readonly message: string;
  /** HTTP status of an API-service answer; 0 when the error does not cross HTTP. */
  readonly status: number;
  readonly use: ErrorUse;
}

const http = (status: number, message: string): ErrorSpec => ({ message, status, use: 'http' });
const protocol = (message: string): ErrorSpec => ({ message, status: 0, use: 'protocol' });
const at = (use: ErrorUse, message: string): ErrorSpec => ({ message, status: 0, use });

export const ErrorTable = {
  // Start: bad configuration, plugins that cannot be loaded.
  GSF_ERR_MANIFEST: at('start', '%s'),
  GSF_ERR_PLUGIN_LOAD: at('start', "plugin '%s' load failed: %s"),
  GSF_ERR_PLUGIN_EXPORT: at('start', "plugin '%s' (%s) %s"),
  GSF_ERR_PLUGIN_DUPLICATE: at('start', "plugin '%s' registers %s '%s', already registered by plugin '%s'"),
  // Plugin code that threw, at any stage (see PluginError).
  GSF_ERR_HANDLER_FAILED: at('plugin', "plugin '%s' %s failed: %s"),
  // Wrong use of the plugin API.
  GSF_ERR_UNKNOWN_EVENT: at('plugin', "no plugin registers an event named '%s'"),
  GSF_ERR_BAD_ARGUMENT: at('plugin', '%s'),
  GSF_ERR_NOT_ON_WORKER: at('plugin', '%s is only available on the main thread'),
  GSF_ERR_SHUTTING_DOWN: at('plugin', 'the server is shutting down; %s refused'),
  GSF_ERR_COUNTER_UNKNOWN: at('plugin', "counter '%s' of '%s' is not registered; create it before monitoring it"),
  // The event system's own log lines about events that could not finish.
  GSF_ERR_EVENT_ABANDONED: at('event', 'event_name=%s, event_id=%s, event_tag=%s: it awaited on an event thread that was ended; its tag is free again'),
  GSF_ERR_EVENT_LOST: at('event', 'event_name=%s, event_id=%s, event_tag=%s: its event thread exited while it ran (process.exit or a fatal error); its tag is free again'),
  // API service answers: `{"error": code, "message": …}` with this status.
  GSF_ERR_BAD_REQUEST: http(400, '%s'),
  GSF_ERR_UNAUTHORIZED: http(401, 'missing or invalid bearer token'),
  GSF_ERR_NOT_FOUND: http(404, 'no route for %s %s'),
  GSF_ERR_COUNTER_NOT_FOUND: http(404, '%s'),
  GSF_ERR_PROFILE_NOT_FOUND: http(404, "no profile for event '%s' (profiled events must be named and have run)"),
  GSF_ERR_METHOD_NOT_ALLOWED: http(405, 'method %s not allowed for %s'),
  GSF_ERR_PROFILER_DISABLED: http(409, 'event profiling is off; turn it on with PUT /v1/configurations/enable_event_profiler/true'),
  GSF_ERR_BODY_TOO_LARGE: http(413, 'request body exceeds %s bytes'),
  GSF_ERR_URI_TOO_LONG: http(414, 'request path exceeds %s bytes'),
  GSF_ERR_INTERNAL: http(500, 'internal error: %s'),
  // Answers of plugin route and operations-console handlers (see API_STATUS below).
  GSF_ERR_NOT_IMPLEMENTED: http(404, '%s is not implemented by the %s console handlers'),
  GSF_ERR_RESOURCE_NOT_FOUND: http(404, '%s'),
  GSF_ERR_UNAUTHENTICATED: http(401, '%s'),
  GSF_ERR_FORBIDDEN: http(403, '%s'),
  GSF_ERR_CONFLICT: http(409, '%s'),
  GSF_ERR_TOO_MANY_REQUESTS: http(429, '%s'),
  GSF_ERR_UNAVAILABLE: http(503, '%s'),
  GSF_ERR_HANDLER_TIMEOUT: http(504, '%s %s: the handler did not answer within %s ms'),
  GSF_ERR_HANDLER_EXPIRED: http(504, '%s'),
  GSF_ERR_HANDLER_EVENT_ENDED: http(504, '%s %s: the handler\'s event %s before it answered'),
  // A runtime configuration change that could not take effect (PUT /v1/configurations/…).
  GSF_ERR_CONFIG_NOT_APPLIED: http(409, '%s stays %s, it could not be set to %s: %s'),
  GSF_ERR_ROUTE_CONFLICT: at('start', "plugin '%s' route %s conflicts with %s"),
  // Plugin hot reload (POST /v1/plugins/reload, /v1/plugins/{name}/reload, SIGHUP, --watch).
  GSF_ERR_PLUGIN_NOT_FOUND: http(404, "no plugin named '%s' (running: %s)"),
  GSF_ERR_RELOAD_RUNNING: http(409, 'a reload of %s is running; ask again when it has finished'),
  GSF_ERR_RELOAD_FAILED: http(422, 'reload of %s refused, the running version keeps serving: %s'),
  GSF_ERR_RELOAD_TIMEOUT: http(422, 'reload of %s refused, the running version keeps serving: not serving within %s ms (EventDispatcher.plugin_reload_timeout_in_ms): %s'),
  GSF_ERR_RELOAD_UNAVAILABLE: http(503, 'plugin reload is unavailable: %s'),
  // Object model: declarations (at start), values and calls (in handlers), storage.
  GSF_ERR_OBJECT_SCHEMA: at('start', '%s'),
  GSF_ERR_OBJECT_VALUE: at('plugin', '%s'),
  GSF_ERR_OBJECT_NO_EVENT: at('plugin', 'api.objects.%s needs a running event; outside events use api.objects.transact()'),
  GSF_ERR_OBJECT_STATE: at('plugin', '%s'),
  GSF_ERR_OBJECT_CONFLICT: at('event', 'object changes still conflicted after %s reruns (%s); they are discarded'),
  GSF_ERR_OBJECT_STORE: at('event', 'object store: %s'),
  // AuthenticationClient system errors (distinct from a failed authentication).
  GSF_ERR_AUTH_UNREACHABLE: at('auth', 'authenticator at %s is unreachable (%s)'),
  GSF_ERR_AUTH_TIMEOUT: at('auth', 'authenticator at %s did not answer within %s ms'),
  GSF_ERR_AUTH_BAD_ANSWER: at('auth', 'authenticator at %s gave an unexpected answer: %s'),
  // Cluster (component `Cluster`): Redis unreachable, other servers that do not answer.
  GSF_ERR_CLUSTER_START: at('start', 'Cluster: %s'),
  GSF_ERR_CLUSTER_OFF: http(409, 'cluster=true needs the Cluster component; this server runs alone'),
  GSF_ERR_CLUSTER_UNAVAILABLE: http(503, 'the cluster is unavailable: %s'),
  GSF_ERR_CLUSTER_NOT_FOUND: http(404, '%s'),
  GSF_ERR_CLUSTER_UNKNOWN_SERVER: at('plugin', "no live server '%s' in the cluster"),
  GSF_ERR_CLUSTER_TIMEOUT: at('plugin', "server '%s' did not answer %s within %s ms"),
  GSF_ERR_CLUSTER_DROPPED: at('event', '%s message(s) for other servers dropped: %s'),
  // Client protocol: the `code` of an `_error` frame; the session stays open.
  GSF_ERR_MESSAGE_UNKNOWN_TYPE: protocol("no handler for message type '%s'"),
  GSF_ERR_MESSAGE_MALFORMED: protocol('%s'),
  GSF_ERR_MESSAGE_BAD_JSON: protocol('message is not valid JSON: %s'),
  GSF_ERR_MESSAGE_BAD_MSGPACK: protocol('message is not valid msgpack: %s'),
  GSF_ERR_MESSAGE_TOO_BIG: protocol('message of %s bytes exceeds the limit of %s bytes'),
  GSF_ERR_MESSAGE_WRONG_FRAME: protocol('%s'),
  GSF_ERR_MESSAGE_HANDLER_FAILED: protocol("the handler of '%s' failed"),
  GSF_ERR_MESSAGE_TIMEOUT: protocol("the handler of '%s' did not finish within the event timeout"),
  GSF_ERR_MESSAGE_DROPPED: protocol("message '%s' was dropped unanswered: %s"),
  // Native addon: the `code` of errors thrown at the C++ boundary (native/core/errors.h).
  GSF_ERR_NATIVE_ARGUMENT: at('native', 'gsf native: %s'),
  GSF_ERR_NATIVE_STATE: at('native', 'gsf native: %s'),
  GSF_ERR_NATIVE_MEMORY: at('native', 'gsf native: out of memory'),
  GSF_ERR_NATIVE: at('native', 'gsf native: %s'),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ErrorTable;

/** The protocol codes by the names session code and the SDK use (`ProtocolError.unknownType`). */
export const ProtocolErrorCodes = {
  /** No plugin handles this message type (or the type is reserved: starts with `_`). */
  unknownType: 'GSF_ERR_MESSAGE_UNKNOWN_TYPE',
  /** The decoded message is not `{type: non-empty string, body?, id?: integer}`. */
  malformed: 'GSF_ERR_MESSAGE_MALFORMED',
  /** A text frame that is not valid JSON (json sessions). */
  badJson: 'GSF_ERR_MESSAGE_BAD_JSON',
  /** A binary frame that is not valid msgpack (msgpack sessions). */
  badMsgpack: 'GSF_ERR_MESSAGE_BAD_MSGPACK',
  /** The message is longer than `SessionService.max_message_bytes`. */
  tooBig: 'GSF_ERR_MESSAGE_TOO_BIG',
  /** A binary frame on a json session or a text frame on a msgpack session. */
  wrongFrame: 'GSF_ERR_MESSAGE_WRONG_FRAME',
  /** The message handler threw; details are in the server log. */
  handlerFailed: 'GSF_ERR_MESSAGE_HANDLER_FAILED',
  /** The message's event ran past `EventDispatcher.event_timeout_in_ms`; what it sent was dropped. */
  timeout: 'GSF_ERR_MESSAGE_TIMEOUT',
  /** The message never finished because of another event's timeout (cancelled behind it, or abandoned with its thread). */
  dropped: 'GSF_ERR_MESSAGE_DROPPED',
} as const satisfies Record<string, ErrorCode>;

/**
 * What a handler's status (`gsf_type_status` of native/include/gsf_plugin.h, `ApiStatus` of
 * managed handlers) answers over HTTP: the status, and the code of the `{error, message}` body.
 * OK is the writer's own answer (200, or 204 for a void writer). The "Handler statuses" table
 * of docs/reference/errors.md is this one.
 */
export const API_STATUS: ReadonlyArray<{ name: string; http: number; code: ErrorCode | null }> = [
  { name: 'OK', http: 200, code: null },
  { name: 'INVALID_ARGUMENT', http: 400, code: 'GSF_ERR_BAD_REQUEST' },
  { name: 'NOT_FOUND', http: 404, code: 'GSF_ERR_RESOURCE_NOT_FOUND' },
  { name: 'CONFLICT', http: 409, code: 'GSF_ERR_CONFLICT' },
  { name: 'UNAVAILABLE', http: 503, code: 'GSF_ERR_UNAVAILABLE' },
  { name: 'INTERNAL', http: 500, code: 'GSF_ERR_INTERNAL' },
  { name: 'NOT_IMPLEMENTED', http: 404, code: 'GSF_ERR_NOT_IMPLEMENTED' },
  { name: 'PERMISSION_DENIED', http: 403, code: 'GSF_ERR_FORBIDDEN' },
  { name: 'UNAUTHENTICATED', http: 401, code: 'GSF_ERR_UNAUTHENTICATED' },
  { name: 'RESOURCE_EXHAUSTED', http: 429, code: 'GSF_ERR_TOO_MANY_REQUESTS' },
  { name: 'EXPIRED', http: 504, code: 'GSF_ERR_HANDLER_EXPIRED' },
];

/** An error carrying a `GSF_ERR_*` code and, when it maps to HTTP, a status. */
export class GsfError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra fields of the JSON error body (e.g. `allowed` of a 405, `field` of a 400). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, args: readonly unknown[] = [], options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(format(ErrorTable[code].message, args), options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GsfError';
    this.code = code;
    this.status = ErrorTable[code].status;
    this.details = options?.details ?? {};
  }

  /** The JSON body an HTTP answer carries: `{error, message, ...details}`. */
  toBody(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...this.details };
  }
}

/**
 * Whether `err` answers an HTTP request as itself: a GsfError whose status is an HTTP error
 * status (an integer 400-599). One whose status a plugin set to anything else (1.5, 101, 204,
 * 600) answers as a 500 GSF_ERR_INTERNAL, never as a status line a client cannot read.
 */
export function answersAsItself(err: unknown): err is GsfError {
  return err instanceof GsfError && Number.isInteger(err.status) && err.status >= 400 && err.status <= 599;
}

/**
 * Plugin code that threw, at any stage: loading, `register`, start and stop hooks, event,
 * message, session and timeout handlers, monitors. Every such failure reads the same way:
 * `plugin '<plugin>' <stage> ['<subject>'] failed: <cause>`, and keeps the original error as
 * `cause` (its stack points into the plugin).
 */
export class PluginError extends GsfError {
  readonly plugin: string;
  readonly stage: string;
  readonly subject: string | undefined;

  constructor(plugin: string, stage: string, cause: unknown,
    options: { subject?: string; code?: 'GSF_ERR_HANDLER_FAILED' | 'GSF_ERR_PLUGIN_LOAD' | 'GSF_ERR_OBJECT_SCHEMA' } = {}) {
    const what = options.subject === undefined ? stage : `${stage} '${options.subject}'`;
    const code = options.code ?? 'GSF_ERR_HANDLER_FAILED';
    const failed = `plugin '${plugin}' ${what} failed: ${describeError(cause)}`;
    super(code, code === 'GSF_ERR_PLUGIN_LOAD' ? [plugin, describeError(cause)] : code === 'GSF_ERR_OBJECT_SCHEMA' ? [failed] : [plugin, what, describeError(cause)], { cause });
    this.name = 'PluginError';
    this.plugin = plugin;
    this.stage = stage;
    this.subject = options.subject;
  }
}

/** Fills `%s` placeholders in order. */
export function format(template: string, args: readonly unknown[]): string {
  let i = 0;
  return template.replace(/%s/g, () => String(args[i++]));
}

/** Builds a `GsfError` for `code` with the template's arguments. */
export function gsfError(code: ErrorCode, ...args: unknown[]): GsfError {
  return new GsfError(code, args);
}

/** Short text of any thrown value, for log lines. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  try {
    return String(err);
  } catch {
    // A value with no string form (Object.create(null), a throwing toString).
    return `a thrown value with no string form (${Object.prototype.toString.call(err)})`;
  }
}

/**
 * In the reason of a commit whose COMMIT was sent and never answered (the connection was lost):
 * the database may have applied it. Its event is told so (`mayHaveCommitted`), not that nothing
 * changed.
 */
export const OUTCOME_UNKNOWN = 'the connection was lost at COMMIT, so the changes may have been applied';

/** Whether `err` (a failed commit) may have been applied all the same (OUTCOME_UNKNOWN). */
export function mayHaveCommitted(err: unknown): boolean {
  return err instanceof Error && err.message.includes(OUTCOME_UNKNOWN);
}
