/**
 * What each plugin declared on the main thread, and the hook a feature uses to follow a plugin
 * reload (main thread).
 *
 * A reload replaces the reloaded plugin's part of every registration: its events, session
 * message types and handlers, flags, callable counters, and its entries of every list in
 * `Declarations` (timers, counters, start/stop hooks, timeout handlers, monitors, and whatever
 * a feature adds there), its console registrations and its REST routes. A feature that keeps
 * state of its own built from those registrations (the counter monitor, the session listener's
 * type cache, the console's custom-query routes, the mounted plugin routes) subscribes with
 * `onPluginSwap` and updates it from `before` and `after` or the registries. Listeners run
 * at the switch itself, synchronously, between the old event threads' last claim and the new
 * ones' first: what they change is seen by the first event of the new code.
 */
import type { Logger } from '../log/logger.ts';
import { describeError } from '../errors.ts';
import type { Declarations } from '../plugins/api.ts';

/** One plugin's part of the main thread's registrations. */
export interface PluginDeclarations {
  plugin: string;
  version: string;
  /** Named events (`api.event`, native `register_event`). */
  events: string[];
  /** Session message types (`api.sessions.onMessage`, native `register_message`). */
  messageTypes: string[];
  /** User flags (`api.flags.define`). */
  flags: string[];
  /** This plugin's entries of every declaration list. */
  declarations: Declarations;
}

/** One plugin replaced by a reload. */
export interface PluginSwap {
  plugin: string;
  before: PluginDeclarations;
  after: PluginDeclarations;
}

export type PluginSwapListener = (swap: PluginSwap) => void;

const listeners = new Set<PluginSwapListener>();

/** Calls `fn` at the switch of every plugin reload (main thread); returns the unsubscribe function. */
export function onPluginSwap(fn: PluginSwapListener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Tells every listener; a listener that throws is logged and the others still run. */
export function announcePluginSwap(swap: PluginSwap, log: Logger): void {
  for (const fn of listeners) {
    try {
      fn(swap);
    } catch (err) {
      log.error(`GSF_ERR_INTERNAL: a plugin-reload listener failed for plugin '${swap.plugin}': ${describeError(err)}`);
    }
  }
}

/** The entries of `plugin` in every list of `all`. */
export function declarationsOf(all: Declarations, plugin: string): Declarations {
  const out: Record<string, unknown[]> = {};
  for (const [key, list] of Object.entries(all) as Array<[string, Array<{ plugin?: string }>]>) {
    out[key] = list.filter((entry) => entry.plugin === plugin);
  }
  return out as unknown as Declarations;
}
