/**
 * The one table of gsf error codes. Each entry has a message template and, where the error
 * crosses the wire, the HTTP status it maps to. Templates use `%s` placeholders filled in order.
 */
export const ErrorTable = {
  GSF_ERR_MANIFEST: { message: '%s', status: 0 },
  GSF_ERR_PLUGIN_LOAD: { message: "plugin '%s' failed to load: %s", status: 0 },
  GSF_ERR_PLUGIN_EXPORT: { message: "plugin '%s' (%s) %s", status: 0 },
  GSF_ERR_PLUGIN_DUPLICATE: { message: "plugin '%s' registers %s '%s', already registered by plugin '%s'", status: 0 },
  GSF_ERR_HANDLER_FAILED: { message: "plugin '%s' %s '%s' failed: %s", status: 0 },
  GSF_ERR_UNKNOWN_EVENT: { message: "no plugin registers an event named '%s'", status: 0 },
  GSF_ERR_BAD_ARGUMENT: { message: '%s', status: 0 },
  GSF_ERR_NOT_ON_WORKER: { message: '%s is only available on the main thread', status: 0 },
  GSF_ERR_SHUTTING_DOWN: { message: 'the server is shutting down; %s refused', status: 0 },
  GSF_ERR_UNKNOWN_FLAG: { message: "unknown flag '%s'", status: 400 },
  GSF_ERR_FLAG_VALUE: { message: '%s is not a valid value for %s', status: 400 },
  GSF_ERR_FLAG_IMMUTABLE: { message: "flag '%s' cannot be changed at run time", status: 400 },
  GSF_ERR_NOT_FOUND: { message: 'no route for %s %s', status: 404 },
  GSF_ERR_METHOD_NOT_ALLOWED: { message: 'method %s not allowed for %s', status: 405 },
  GSF_ERR_BODY_TOO_LARGE: { message: 'request body exceeds %s bytes', status: 413 },
  GSF_ERR_INTERNAL: { message: 'internal error: %s', status: 500 },
  // AuthenticationClient system errors (distinct from a failed authentication).
  GSF_ERR_AUTH_UNREACHABLE: { message: 'authenticator at %s is unreachable (%s)', status: 0 },
  GSF_ERR_AUTH_TIMEOUT: { message: 'authenticator at %s did not answer within %s ms', status: 0 },
  GSF_ERR_AUTH_BAD_ANSWER: { message: 'authenticator at %s gave an unexpected answer: %s', status: 0 },
  GSF_ERR_COUNTER_UNKNOWN: { message: "counter '%s' of '%s' is not registered; create it before monitoring it", status: 404 },
  GSF_ERR_COUNTER_NOT_FOUND: { message: '%s', status: 404 },
  GSF_ERR_PROFILER_DISABLED: { message: 'event profiling is off; turn it on with PUT /v1/configurations/enable_event_profiler/true', status: 409 },
  GSF_ERR_PROFILE_NOT_FOUND: { message: "no profile for event '%s' (profiled events must be named and have run)", status: 404 },
  GSF_ERR_UNAUTHORIZED: { message: 'missing or invalid bearer token', status: 401 },
  GSF_ERR_BAD_REQUEST: { message: '%s', status: 400 },
  // Object model: declarations (at start), values and calls (in handlers), storage.
  GSF_ERR_OBJECT_SCHEMA: { message: '%s', status: 0 },
  GSF_ERR_OBJECT_VALUE: { message: '%s', status: 0 },
  GSF_ERR_OBJECT_NO_EVENT: { message: 'api.objects.%s needs a running event; outside events use api.objects.transact()', status: 0 },
  GSF_ERR_OBJECT_STATE: { message: '%s', status: 0 },
  GSF_ERR_OBJECT_CONFLICT: { message: 'object changes still conflicted after %s reruns (%s); they are discarded', status: 0 },
  GSF_ERR_OBJECT_STORE: { message: 'object store: %s', status: 0 },
} as const;

export type ErrorCode = keyof typeof ErrorTable;

/** An error carrying a `GSF_ERR_*` code and, when it maps to HTTP, a status. */
export class GsfError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, args: readonly unknown[] = [], options?: { cause?: unknown }) {
    super(format(ErrorTable[code].message, args), options);
    this.name = 'GsfError';
    this.code = code;
    this.status = ErrorTable[code].status;
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
  return String(err);
}
