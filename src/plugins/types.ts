/**
 * The managed-plugin contract: a module in `plugins/<name>/` whose default export is a
 * `PluginDefinition`. `register` runs once in the main thread and once in every event worker,
 * so everything it registers exists on every thread.
 */
import type { ArgValue } from '../config/manifest.ts';
import type { Logger } from '../log/logger.ts';
import type { CounterCallback } from '../counters/registry.ts';
import type { EventHandler, InvokeOptions, TimeoutHandler } from '../events/types.ts';
import type { AccountApi, SessionApi } from '../session/types.ts';
import type { AuthApi } from '../auth/client/plugin-api.ts';
import type { ObjectsApi } from '../objects/types.ts';
import type { HttpApi } from '../api/plugin-routes.ts';
import type { ConsoleApi } from '../console/types.ts';
import type { ClusterApi } from '../cluster/plugin-api.ts';

export interface PluginDefinition {
  name: string;
  version: string;
  register(api: PluginApi): void | Promise<void>;
}

export interface TimerOptions {
  /** Event name of each firing (default: the event's name). */
  name?: string;
}

export interface TimerApi {
  /** Runs `event` once after `ms`. Declared during `register`, it starts at server start (and when the plugin is reloaded). */
  after(ms: number, event: string, payload?: unknown, options?: TimerOptions): number;
  /** Runs `event` every `ms`. Declared during `register`, it starts at server start; a reload stops it and starts the new version's. */
  every(ms: number, event: string, payload?: unknown, options?: TimerOptions): number;
  /**
   * Stops a timer started at run time; false if it is unknown or has fired (one-shot), or 0.
   * An id that is not a non-negative safe integer (a string, 1.5) throws `GSF_ERR_BAD_ARGUMENT`.
   */
  cancel(id: number): boolean;
}

/**
 * Counters shared by every thread. Inside an event, `update`, `updateDouble`, `increase` and
 * `decrease` are held with the event's effects: during its synchronous run, and while it has
 * objects until its commit is durable (dropped on a rerun or a failed commit); `increase` and
 * `readInt` there see the event's own held changes on top of the stored value.
 */
export interface CounterApi {
  /** Sets a counter (integer when `value` is an integer, else floating point). */
  update(category: string, name: string, value: number, description?: string): void;
  /** Sets a floating-point counter. */
  updateDouble(category: string, name: string, value: number, description?: string): void;
  /** Adds `amount` (1); returns the value as this event sees it. */
  increase(category: string, name: string, amount?: number): number;
  decrease(category: string, name: string, amount?: number): number;
  /** The value as an integer (as this event sees it), or null when the counter does not exist. */
  readInt(category: string, name: string): number | null;
  /** Counter names of a category (empty when it has none); counters are shared by every thread. */
  list(category: string): string[];
  /**
   * Registers a counter computed on read by `fn(category, name)` (SPEC 4.4); returning
   * undefined means "no value" (HTTP 204). The callback runs on the main thread.
   */
  registerCallable(category: string, name: string, description: string, fn: CounterCallback): void;
  /**
   * Logs the SPEC warning line when the counter exceeds `threshold`, checked every
   * `counter_monitoring_interval_in_sec`. The counter must exist when monitoring starts.
   */
  monitor(category: string, name: string, threshold: number): void;
  /** Creates a counter once per server (during `register`: on the main thread only). */
  define(category: string, name: string, description: string, initial?: number): void;
}

export interface FlagSpec {
  type: 'bool' | 'int32' | 'uint64' | 'double' | 'string';
  default: boolean | number | string;
  desc: string;
}

export interface FlagApi {
  /** Defines a user flag; it is mutable over REST when listed in `additional_configurations`. */
  define(name: string, spec: FlagSpec): void;
  /** The flag's current value (read it each time to see run-time changes). */
  get<T extends ArgValue = ArgValue>(name: string): T;
}

export interface TagApi {
  /** A fresh random tag. */
  random(): number;
  /** A tag derived from `name`: the same on every thread and every run. */
  named(name: string): number;
  /** The tag all timers share. */
  readonly timer: number;
}

export interface PluginApi {
  /** This plugin's name. */
  readonly plugin: string;
  /** Which thread this copy of the plugin is registered on. */
  readonly thread: 'main' | 'worker';
  readonly log: Logger;
  /** Registers a named event handler; `invoke(name)` runs it on an event thread. */
  event<P = unknown>(name: string, handler: EventHandler<P>): void;
  /** Queues an event; returns its id. Tag and name follow SPEC 6.2 and 6.3 when omitted. */
  invoke(event: string, payload?: unknown, options?: InvokeOptions): number;
  /** Renames the running event. */
  setEventName(name: string): void;
  readonly timers: TimerApi;
  readonly counters: CounterApi;
  readonly flags: FlagApi;
  readonly tags: TagApi;
  /** Client sessions: message handlers, opened/closed handlers, send, broadcast, close. */
  readonly sessions: SessionApi;
  /** The account manager: login (one session per account), logout, locate. */
  readonly accounts: AccountApi;
  /** The AuthenticationClient: platform token checks and friend lists through the authenticator agent. */
  readonly auth: AuthApi;
  /** Game objects (declared in objects/*.json): the running event's, committed when it ends. */
  readonly objects: ObjectsApi;
  /** REST routes of this plugin on the API service; handlers run as events (random tag) and answer through a writer. */
  readonly http: HttpApi;
  /** The operations console (`/cs-api/v1/`, component DeployApiService): handler and registration rules. */
  readonly console: ConsoleApi;
  /** Several servers as one game (component `Cluster`): this server's id, the live servers, invoke elsewhere. */
  readonly cluster: ClusterApi;
  /** Called on the main thread when an event times out (SPEC 6.3). */
  onEventTimeout(handler: TimeoutHandler): void;
  /** Runs on the main thread after the workers are up, and after a reload of this plugin switched to this version. */
  onStart(fn: () => void | Promise<void>): void;
  /** Runs on the main thread while the server stops (before the queue drains), and before a reload replaces this version. */
  onStop(fn: () => void | Promise<void>): void;
}
