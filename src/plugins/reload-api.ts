/**
 * A plugin reload's console registrations and REST routes (main thread). While the new version
 * is staged, what its `register` declares through `api.console` and `api.http` (or a native
 * plugin's C registrations) lands in registries keyed by the staging view of the runtime; here
 * they are read out, checked against the other plugins and gsf's routes, and at the switch put
 * in place of the old version's. The console and the plugin-route features follow the switch
 * through `onPluginSwap` (mounting and unmounting routes).
 */
import type { EventRuntime } from '../events/runtime.ts';
import { apiTargets, type ApiTarget } from '../api/api-event.ts';
import { routeClash, routesOf, type RouteEntry } from '../api/plugin-routes.ts';
import { consoleRegistry, type ConsoleRegistry } from '../console/registry.ts';
import { consoleClash, replaceConsole } from '../console/registry-swap.ts';
import type { ThreadContext } from '../hooks/thread-context.ts';

/** What the new version of one plugin registered for the API service, not yet in effect. */
export interface StagedApi {
  console: ConsoleRegistry;
  routes: RouteEntry[];
  /** The handlers of its operations, campaigns, custom queries and routes, by target key. */
  targets: Map<string, ApiTarget>;
}

/** Reads what `register` registered through the staging view `view` (call before the view commits). */
export function stagedApi(view: EventRuntime, plugin: string): StagedApi {
  const targets = new Map([...apiTargets(view)].filter(([, t]) => t.plugin === plugin));
  return { console: consoleRegistry(view), routes: routesOf(view).filter((r) => r.plugin === plugin), targets };
}

/** The first console or route conflict of the staged plugins (in reload order) with the rest, or null. */
export function apiClash(thread: ThreadContext, staged: ReadonlyArray<{ name: string; api: StagedApi }>): { plugin: string; error: Error } | null {
  const reloaded = new Set(staged.map((s) => s.name));
  return consoleClash(consoleRegistry(thread.runtime), staged.map((s) => ({ name: s.name, console: s.api.console })), reloaded)
    ?? routeClash(thread.runtime, staged.map((s) => ({ name: s.name, routes: s.api.routes })), reloaded);
}

/**
 * Puts the staged console registrations, routes and their handler targets in place of
 * `plugin`'s old ones (at the switch). `replaceEntries` keeps the route list in plugin order.
 */
export function commitApi(thread: ThreadContext, plugin: string, staged: StagedApi, order: readonly string[],
  replaceEntries: (list: RouteEntry[], plugin: string, fresh: readonly RouteEntry[], order: readonly string[]) => void): void {
  const rt = thread.runtime;
  const live = consoleRegistry(rt);
  const routes = routesOf(rt);
  const had = routes.some((r) => r.plugin === plugin) || live.managed.plugins.has(plugin) || live.native.plugins.has(plugin);
  replaceConsole(live, staged.console, plugin, order);
  replaceEntries(routes, plugin, staged.routes, order);
  // The main thread's targets are the same as the event threads' (which load the new code on their own).
  if (!had && staged.targets.size === 0) return;
  const targets = apiTargets(rt);
  for (const [key, t] of [...targets]) if (t.plugin === plugin) targets.delete(key);
  for (const [key, t] of staged.targets) targets.set(key, t);
}
