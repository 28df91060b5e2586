/**
 * Checks of a reload's staged plugins that need the whole set of plugins: what the server
 * start would refuse, refused before the switch instead of failing after it.
 */
import { counterRegistry } from '../counters/registry.ts';
import type { ThreadContext } from '../hooks/thread-context.ts';
import type { StagedPlugin, StagingOwners } from './reload-stage.ts';
import { apiClash } from './reload-api.ts';

/** Why a staged set cannot go in: the plugin to blame and the error. */
export interface StagedProblem {
  plugin: string;
  error: Error;
}

/** The first problem of the staged plugins against the rest, or null. */
export function checkStaged(thread: ThreadContext, staged: readonly StagedPlugin[], owners: StagingOwners,
  counterService: boolean): StagedProblem | null {
  const file = thread.manifest.file;
  for (const name of thread.registration.additionalConfigurations) {
    if (owners.flags.has(name) || staged.some((s) => s.flags.has(name))) continue;
    const plugin = thread.registration.flagOwners.get(name) ?? staged[0]!.name;
    return { plugin, error: new Error(`${file}: RuntimeConfiguration.additional_configurations names '${name}', which the new version no longer defines as a flag`) };
  }
  const events = new Set([...owners.events.keys(), ...staged.flatMap((s) => s.handlers.map((h) => h.event))]);
  // Timers the other plugins declared fire the same events after the switch.
  const reloaded = new Set(staged.map((s) => s.name));
  for (const t of thread.declarations.timers) {
    if (reloaded.has(t.plugin) || events.has(t.event)) continue;
    const plugin = thread.registration.eventOwners.get(t.event) ?? staged[0]!.name;
    return { plugin, error: new Error(`timer event '${t.event}': plugin '${t.plugin}' declares a timer of it, and the new version no longer registers an event named '${t.event}'`) };
  }
  const counters = new Set(staged.flatMap((s) => [...s.declarations.counters, ...s.declarations.callables].map((c) => `${c.category}\0${c.name}`)));
  for (const s of staged) {
    for (const t of s.declarations.timers) {
      if (!events.has(t.event)) return { plugin: s.name, error: new Error(`timer event '${t.event}': no plugin registers an event named '${t.event}'`) };
      for (const v of [t.delayMs, t.intervalMs]) {
        if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
          return { plugin: s.name, error: new Error(`timer '${t.event}': delay must be a non-negative number of ms, got ${String(v)}`) };
        }
      }
    }
    for (const m of s.declarations.monitors) {
      if (!counterService) {
        return { plugin: s.name, error: new Error(`it monitors counter '${m.category}/${m.name}', which needs the CounterService component; list CounterService`) };
      }
      if (typeof m.threshold !== 'number' || !Number.isFinite(m.threshold)) {
        return { plugin: s.name, error: new Error(`monitor of '${m.category}/${m.name}': threshold must be a finite number, got ${String(m.threshold)}`) };
      }
      if (!counters.has(`${m.category}\0${m.name}`) && !counterRegistry.has(m.category, m.name)) {
        return { plugin: s.name, error: new Error(`counter '${m.name}' of '${m.category}' is not registered; create it before monitoring it`) };
      }
    }
  }
  return apiClash(thread, staged);
}
