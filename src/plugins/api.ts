/**
 * Builds the `PluginApi` object one plugin receives. Registration-time declarations that must
 * happen once per server (timers, counters, start/stop hooks, timeout handlers) are collected
 * here and carried out by the main thread only; workers keep just the handlers and flags.
 */
import { native } from '../native.ts';
import { gsfError } from '../errors.ts';
import type { ArgType } from '../config/schema.ts';
import { checkValue } from '../config/manifest.ts';
import type { EventRuntime } from '../events/runtime.ts';
import type { TimeoutHandler } from '../events/types.ts';
import { namedTag, randomTag, TIMER_TAG } from '../events/tags.ts';
import { checkTimerArgs, checkTimerId, shown } from '../events/timer-args.ts';
import { decodePayload, encodePayload } from '../events/codec.ts';
import type { FlagSpec, PluginApi, TimerOptions } from './types.ts';
import { counterRegistry, type CounterCallback } from '../counters/registry.ts';
import { activeMonitor } from '../counters/monitor.ts';
import { pluginApiPart } from '../hooks/plugin-api-parts.ts';


export interface TimerDeclaration {
  plugin: string;
  delayMs: number;
  intervalMs: number;
  event: string;
  payload: unknown;
  name?: string;
}

/**
 * What the plugins of one thread declared, to be acted on by the thread context. Every entry
 * names its plugin: a plugin reload replaces that plugin's entries of every list in place
 * (src/plugins/reload-stage.ts), so a list added here is replaced on reload with no more code.
 */
export interface Declarations {
  timers: TimerDeclaration[];
  counters: Array<{ plugin: string; category: string; name: string; description: string; initial: number }>;
  /** Callable counters (main thread): registered at once, or when a reload commits. */
  callables: Array<{ plugin: string; category: string; name: string; description: string; fn: CounterCallback }>;
  onStart: Array<{ plugin: string; fn: () => void | Promise<void> }>;
  onStop: Array<{ plugin: string; fn: () => void | Promise<void> }>;
  timeoutHandlers: Array<{ plugin: string; fn: TimeoutHandler }>;
  monitors: Array<{ plugin: string; category: string; name: string; threshold: number }>;
}

export interface RegistrationContext {
  runtime: EventRuntime;
  declarations: Declarations;
  /** Plugin that registered each event name (duplicate detection). */
  eventOwners: Map<string, string>;
  /** Plugin that defined each user flag. */
  flagOwners: Map<string, string>;
  /** User flags listed in RuntimeConfiguration.additional_configurations. */
  additionalConfigurations: ReadonlySet<string>;
  /** True while plugins' `register` functions run. */
  registering: boolean;
  /** A reload's staging: what takes effect process-wide at once (callable counters) waits for its commit. */
  staged?: boolean;
}

export function emptyDeclarations(): Declarations {
  return { timers: [], counters: [], callables: [], onStart: [], onStop: [], timeoutHandlers: [], monitors: [] };
}

function checkName(what: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value === '') throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what} must be a non-empty string`);
}

/**
 * A counter's category and name: non-empty strings, and neither `.` nor `..`, which no URL can
 * carry as a path segment (clients fold them away), so REST and the dashboard could not read them.
 */
function checkCounter(category: unknown, name: unknown): void {
  checkName('counter category', category);
  checkName('counter name', name);
  for (const [what, v] of [['category', category], ['name', name]] as const) {
    if (v === '.' || v === '..') throw gsfError('GSF_ERR_BAD_ARGUMENT', `counter ${what} must not be '${v}': a URL cannot carry it as a path segment`);
  }
}

function checkAmount(value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw gsfError('GSF_ERR_BAD_ARGUMENT', `counter amount must be a finite number, got ${String(value)}`);
  return value;
}

/** Creates the API object for plugin `plugin`. */
export function createPluginApi(plugin: string, reg: RegistrationContext): PluginApi {
  const rt = reg.runtime;
  const isMain = rt.role === 'main';
  const mainOnly = (what: string): void => {
    if (!isMain && !reg.registering) throw gsfError('GSF_ERR_NOT_ON_WORKER', what);
  };
  const timer = (delayMs: number, intervalMs: number, event: string, payload: unknown, options?: TimerOptions): number => {
    if (reg.registering) {
      checkName('timer event', event);
      // Checked at the call, as a timer started at run time is: a bad one fails its plugin's register.
      checkTimerArgs(event, delayMs, intervalMs, options?.name);
      // Encoded at the call too (a payload that cannot be encoded fails this register), and kept
      // as the copy a handler gets: what the plugin changes in it afterwards is not the timer's.
      const bytes = encodePayload(payload);
      const copy = bytes === null ? undefined : decodePayload(bytes, 0, bytes.byteLength);
      reg.declarations.timers.push({ plugin, delayMs, intervalMs, event, payload: copy, name: options?.name });
      return 0;
    }
    return rt.addTimer(delayMs, intervalMs, event, payload, options?.name);
  };
  const update = (category: string, name: string, value: number, isDouble: boolean, description?: string): void => {
    checkCounter(category, name);
    checkAmount(value);
    rt.counterUpdate(category, name, value, isDouble, description);
  };

  return {
    plugin,
    thread: rt.role,
    log: rt.log,
    event(name, handler) {
      checkName('event name', name);
      if (typeof handler !== 'function') throw gsfError('GSF_ERR_BAD_ARGUMENT', `event '${name}': handler must be a function`);
      const owner = reg.eventOwners.get(name);
      if (owner !== undefined) throw gsfError('GSF_ERR_PLUGIN_DUPLICATE', plugin, 'event', name, owner);
      reg.eventOwners.set(name, plugin);
      rt.addHandler(plugin, name, handler as never);
    },
    invoke: (event, payload, options) => rt.invoke(event, payload, options),
    setEventName: (name) => rt.setEventName(name),
    timers: {
      after: (ms, event, payload, options) => timer(ms, 0, event, payload, options),
      every: (ms, event, payload, options) => {
        if (typeof ms !== 'number' || !(ms > 0)) throw gsfError('GSF_ERR_BAD_ARGUMENT', `timers.every: interval must be > 0 ms, got ${shown(ms)}`);
        return timer(ms, ms, event, payload, options);
      },
      cancel: (id) => {
        // The addon would refuse a non-number with GSF_ERR_NATIVE_ARGUMENT, a code of its own.
        checkTimerId(id);
        return native.timerCancel(id);
      },
    },
    counters: {
      // An integer JavaScript cannot hold exactly (past ±2^53) is kept as the double it is, not cut to int64.
      update: (c, n, v, d) => update(c, n, v, !Number.isSafeInteger(v), d),
      updateDouble: (c, n, v, d) => update(c, n, v, true, d),
      increase: (c, n, amount = 1) => {
        checkCounter(c, n);
        return rt.counterIncrease(c, n, checkAmount(amount));
      },
      decrease: (c, n, amount = 1) => {
        checkCounter(c, n);
        return rt.counterIncrease(c, n, -checkAmount(amount));
      },
      readInt: (c, n) => {
        checkName('counter category', c);
        checkName('counter name', n);
        return rt.counterRead(c, n);
      },
      list: (c) => {
        checkName('counter category', c);
        return native.counterList(c) ?? [];
      },
      registerCallable(category, name, description, fn) {
        checkCounter(category, name);
        // The callback runs where the counter is read: the main thread's API service.
        if (!isMain) return;
        if (reg.registering) reg.declarations.callables.push({ plugin, category, name, description, fn });
        if (!reg.staged) counterRegistry.registerCallable(category, name, description, fn);
      },
      monitor(category, name, threshold) {
        checkCounter(category, name);
        if (reg.registering) reg.declarations.monitors.push({ plugin, category, name, threshold });
        else if (isMain) {
          const monitor = activeMonitor();
          if (!monitor) throw gsfError('GSF_ERR_NOT_ON_WORKER', 'counter monitoring before the server started');
          monitor.add(category, name, threshold);
        } else throw gsfError('GSF_ERR_NOT_ON_WORKER', 'counters.monitor');
      },
      define(category, name, description, initial = 0) {
        checkCounter(category, name);
        // Checked here, at registration: a start or a reload refuses a bad one before anything switches.
        checkAmount(initial);
        if (reg.registering) reg.declarations.counters.push({ plugin, category, name, description, initial });
        // Made at once, also inside an event: it creates the counter, it changes no value.
        else if (native.counterGet(category, name) === null) native.counterUpdate(category, name, checkAmount(initial), !Number.isSafeInteger(initial), description);
      },
    },
    flags: {
      define(name: string, spec: FlagSpec) {
        checkName('flag name', name);
        const owner = reg.flagOwners.get(name) ?? (rt.flags.has(name) ? 'gsf' : undefined);
        if (owner !== undefined) throw gsfError('GSF_ERR_PLUGIN_DUPLICATE', plugin, 'flag', name, owner);
        const argSpec = { type: spec.type as ArgType, default: spec.default, desc: spec.desc };
        const problem = ['bool', 'int32', 'uint64', 'double', 'string'].includes(spec.type)
          ? checkValue(argSpec, spec.default) : `type must be one of bool, int32, uint64, double, string`;
        if (problem) throw gsfError('GSF_ERR_BAD_ARGUMENT', `plugin '${plugin}' flag '${name}': default ${problem}`);
        rt.flags.define(name, argSpec, spec.default, reg.additionalConfigurations.has(name));
        reg.flagOwners.set(name, plugin);
      },
      get: (name) => rt.flags.get(name),
    },
    tags: { random: randomTag, named: namedTag, timer: TIMER_TAG },
    // The features' parts, as the thread registered them (hooks/plugin-api-parts.ts).
    sessions: pluginApiPart('sessions', plugin, rt),
    accounts: pluginApiPart('accounts', plugin, rt),
    auth: pluginApiPart('auth', plugin, rt),
    objects: pluginApiPart('objects', plugin, rt),
    http: pluginApiPart('http', plugin, rt),
    console: pluginApiPart('console', plugin, rt),
    cluster: pluginApiPart('cluster', plugin, rt),
    onEventTimeout(fn) {
      mainOnly('onEventTimeout');
      reg.declarations.timeoutHandlers.push({ plugin, fn });
    },
    onStart(fn) {
      mainOnly('onStart');
      reg.declarations.onStart.push({ plugin, fn });
    },
    onStop(fn) {
      mainOnly('onStop');
      reg.declarations.onStop.push({ plugin, fn });
    },
  };
}
