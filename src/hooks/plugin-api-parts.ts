/**
 * The parts of a plugin's API that features provide (`api.sessions`, `api.objects`, ...): each
 * feature's factory is registered here by the thread's composition (`thread-context.ts`), and
 * `plugins/api.ts` builds a plugin's API from whatever is registered, importing no feature.
 */
import type { EventRuntime } from '../events/runtime.ts';
import type { PluginApi } from '../plugins/types.ts';

/** The members of `PluginApi` that features provide. */
export type PluginApiPartName = 'sessions' | 'accounts' | 'auth' | 'objects' | 'http' | 'console' | 'cluster';

/** Makes one plugin's part on one thread. */
export type PluginApiPartFactory<K extends PluginApiPartName> = (plugin: string, rt: EventRuntime) => PluginApi[K];

const parts = new Map<PluginApiPartName, PluginApiPartFactory<PluginApiPartName>>();

/** Registers the factory of part `name` (a later registration replaces an earlier one). */
export function registerPluginApiPart<K extends PluginApiPartName>(name: K, factory: PluginApiPartFactory<K>): void {
  parts.set(name, factory as unknown as PluginApiPartFactory<PluginApiPartName>);
}

/** Part `name` of plugin `plugin`'s API; throws when no feature registered it. */
export function pluginApiPart<K extends PluginApiPartName>(name: K, plugin: string, rt: EventRuntime): PluginApi[K] {
  const factory = parts.get(name);
  if (factory === undefined) throw new Error(`gsf: no feature registered the plugin API part '${name}'`);
  return factory(plugin, rt) as PluginApi[K];
}
