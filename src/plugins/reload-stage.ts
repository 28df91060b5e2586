/**
 * A plugin reload on the main thread. The new version registers into a staging record, checked
 * against every other plugin, while the old version keeps serving; at the switch the record
 * replaces the plugin's part of every registration at once (`commitStaged`).
 *
 * The plugin's API object talks to the live runtime for everything it does at run time
 * (invoke, session sends, timers, objects): only what `register` declares goes to the record.
 * That is done by handing `register` a view of the runtime that catches the two registration
 * calls which would otherwise change live state (`addHandler`, `flags.define`) until the commit;
 * session handlers, console registrations and REST routes land in the view's own registries
 * (they are keyed by the runtime object), declarations in the staging context's.
 */
import { native } from '../native.ts';
import { GsfError, PluginError, gsfError } from '../errors.ts';
import type { ArgValue } from '../config/manifest.ts';
import type { ArgSpec } from '../config/schema.ts';
import type { FlagRegistry } from '../config/flags.ts';
import { counterRegistry } from '../counters/registry.ts';
import { EventRuntime, type HandlerEntry } from '../events/runtime.ts';
import type { EventHandler } from '../events/types.ts';
import { sessionHandlers, type SessionHandlers } from '../session/worker/message-event.ts';
import type { ThreadContext } from '../hooks/thread-context.ts';
import { createPluginApi, emptyDeclarations, type Declarations, type RegistrationContext } from './api.ts';
import { declarationsOf, type PluginDeclarations } from '../hooks/reload-hooks.ts';
import { commitApi, stagedApi, type StagedApi } from './reload-api.ts';
import type { PluginDefinition } from './types.ts';

/** A flag the new version defines. */
interface StagedFlag {
  spec: ArgSpec;
  value: ArgValue;
  mutable: boolean;
}

/** What the new version of one plugin registered on the main thread, not yet in effect. */
export interface StagedPlugin {
  name: string;
  version: string;
  handlers: HandlerEntry[];
  sessions: SessionHandlers;
  flags: Map<string, StagedFlag>;
  declarations: Declarations;
  /** Console registrations and REST routes. */
  api: StagedApi;
  /** Ends the staging view: from the commit on, the plugin's API object changes live state. */
  commit(): void;
}

/**
 * Who owns which name while the plugins of one reload are staged: the live owners less the
 * reloaded plugins, plus what the ones staged so far registered.
 */
export interface StagingOwners {
  events: Map<string, string>;
  flags: Map<string, string>;
  messages: Map<string, string>;
  /** Flags the reloaded plugins define now: free for their new versions. */
  replacedFlags: ReadonlySet<string>;
}

/** Owners for staging `targets` (plugin names) against the rest. */
export function stagingOwners(thread: ThreadContext, targets: ReadonlySet<string>): StagingOwners {
  const without = (m: Map<string, string>): Map<string, string> => new Map([...m].filter(([, p]) => !targets.has(p)));
  const messages = new Map<string, string>();
  for (const [type, entry] of sessionHandlers(thread.runtime).messages) if (!targets.has(entry.plugin)) messages.set(type, entry.plugin);
  const replacedFlags = new Set([...thread.registration.flagOwners].filter(([, p]) => targets.has(p)).map(([f]) => f));
  return { events: without(thread.registration.eventOwners), flags: without(thread.registration.flagOwners), messages, replacedFlags };
}

/** A view of `flags` whose `define` stages, and where the reloaded plugins' flags are not there (they define them again). */
function stagingFlags(flags: FlagRegistry, old: ReadonlySet<string>, staged: Map<string, StagedFlag>, live: () => boolean): FlagRegistry {
  return new Proxy(flags, {
    get(target, prop) {
      if (live()) {
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      }
      switch (prop) {
        case 'define':
          return (name: string, spec: ArgSpec, value: ArgValue, mutable: boolean): void => {
            if (staged.has(name)) throw new Error(`flag '${name}' is already defined`);
            staged.set(name, { spec, value, mutable });
          };
        case 'has':
          return (name: string): boolean => staged.has(name) || (target.has(name) && !old.has(name));
        case 'get':
          return (name: string): ArgValue => {
            const f = staged.get(name);
            // A flag kept across the reload (same type) keeps its current value: that is what it reads.
            if (f !== undefined && !(old.has(name) && target.info(name)?.type === f.spec.type)) return f.value;
            return target.get(name);
          };
        default: {
          const value = Reflect.get(target, prop, target) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        }
      }
    },
  });
}

/**
 * Loads and registers the new version of plugin `name` into a staging record. `load` gets the
 * runtime view to hand to `nativePluginDefinition`, or imports the managed module.
 */
export async function stagePlugin(thread: ThreadContext, name: string, owners: StagingOwners,
  load: (rt: EventRuntime) => PluginDefinition | Promise<PluginDefinition>): Promise<StagedPlugin> {
  const rt = thread.runtime;
  const handlers: HandlerEntry[] = [];
  // Entries are made by a runtime of their own, exactly as the live one makes them.
  const scratch = new EventRuntime(rt.role, rt.flags, rt.log);
  const flags = new Map<string, StagedFlag>();
  let committed = false;
  const flagsView = stagingFlags(rt.flags, owners.replacedFlags, flags, () => committed);
  const view = new Proxy(rt, {
    get(target, prop, receiver) {
      if (!committed && prop === 'addHandler') {
        return (plugin: string, event: string, fn: EventHandler): void => {
          scratch.addHandler(plugin, event, fn);
          handlers.push(scratch.handlers.get(event)!);
        };
      }
      if (prop === 'flags') return flagsView;
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  const def = await load(view);
  if (def.name !== name) {
    throw new PluginError(name, 'reload', new Error(`the new version is named '${def.name}': a reload keeps the plugin's name (renaming needs a restart)`));
  }
  const reg: RegistrationContext = {
    runtime: view,
    declarations: emptyDeclarations(),
    eventOwners: owners.events,
    flagOwners: owners.flags,
    additionalConfigurations: thread.registration.additionalConfigurations,
    registering: true,
    staged: true,
  };
  try {
    await def.register(createPluginApi(def.name, reg));
  } catch (err) {
    // As at start (loadPlugins): gsf's own refusals as they are, the plugin's throws wrapped.
    if (err instanceof GsfError && err.code !== 'GSF_ERR_BAD_ARGUMENT' && err.code !== 'GSF_ERR_UNKNOWN_EVENT') throw err;
    throw new PluginError(def.name, 'register', err);
  } finally {
    reg.registering = false;
  }
  const sessions = sessionHandlers(view);
  for (const type of sessions.messages.keys()) {
    const owner = owners.messages.get(type);
    if (owner !== undefined) throw gsfError('GSF_ERR_PLUGIN_DUPLICATE', name, 'message type', type, owner);
    owners.messages.set(type, name);
  }
  for (const c of reg.declarations.callables) {
    const mine = thread.declarations.callables.some((o) => o.plugin === name && o.category === c.category && o.name === c.name);
    if (counterRegistry.hasCallable(c.category, c.name) && !mine) {
      throw new PluginError(name, 'register', new Error(`counter '${c.name}' of '${c.category}' is already registered`));
    }
  }
  const api = stagedApi(view, name);
  return {
    name, version: def.version, handlers: handlers.filter((h) => h.plugin === name), sessions, flags, declarations: reg.declarations, api,
    commit: () => { committed = true; },
  };
}

/** Plugin `plugin`'s part of the main thread's registrations now. */
export function currentDeclarations(thread: ThreadContext, plugin: string, version: string): PluginDeclarations {
  return {
    plugin,
    version,
    events: [...thread.runtime.handlers.values()].filter((e) => e.plugin === plugin).map((e) => e.event),
    messageTypes: [...sessionHandlers(thread.runtime).messages].filter(([, e]) => e.plugin === plugin).map(([t]) => t),
    flags: [...thread.registration.flagOwners].filter(([, p]) => p === plugin).map(([f]) => f),
    declarations: declarationsOf(thread.declarations, plugin),
  };
}

/**
 * Replaces `plugin`'s entries of `list` by `fresh`, in place: where its first entry was, or,
 * when it had none, before the first entry of a plugin that loads after it (gsf's own entries
 * come last), so lists stay in plugin order.
 */
export function replaceEntries<T extends { plugin?: string }>(list: T[], plugin: string, fresh: readonly T[], order: readonly string[]): void {
  let at = list.findIndex((e) => e.plugin === plugin);
  if (at < 0) {
    const rank = order.indexOf(plugin);
    at = list.findIndex((e) => { const r = order.indexOf(e.plugin ?? ''); return r < 0 || r > rank; });
    if (at < 0) at = list.length;
  }
  // No entry of the plugin comes before `at`: the others keep their places around the new ones.
  const rest = list.filter((e) => e.plugin !== plugin);
  rest.splice(at, 0, ...fresh);
  list.splice(0, list.length, ...rest);
}

/**
 * Puts a staged plugin in effect on the main thread, replacing its old part of every
 * registration (synchronous: called at the switch). Timers are the caller's (it holds their ids).
 */
export function commitStaged(thread: ThreadContext, staged: StagedPlugin, order: readonly string[]): void {
  const { runtime: rt, registration: live } = thread;
  const name = staged.name;
  const before = declarationsOf(thread.declarations, name);
  for (const [event, entry] of [...rt.handlers]) {
    if (entry.plugin !== name) continue;
    rt.handlers.delete(event);
    rt.handlersById.delete(entry.id);
    live.eventOwners.delete(event);
  }
  for (const h of staged.handlers) {
    rt.handlers.set(h.event, h);
    rt.handlersById.set(h.id, h);
    live.eventOwners.set(h.event, name);
  }
  const sessions = sessionHandlers(rt);
  for (const [type, entry] of [...sessions.messages]) if (entry.plugin === name) sessions.messages.delete(type);
  for (const [type, entry] of staged.sessions.messages) sessions.messages.set(type, entry);
  replaceEntries(sessions.opened, name, staged.sessions.opened, order);
  replaceEntries(sessions.closed, name, staged.sessions.closed, order);
  commitFlags(thread, staged);
  commitApi(thread, name, staged.api, order, replaceEntries);
  for (const key of Object.keys(thread.declarations) as Array<keyof Declarations>) {
    replaceEntries(thread.declarations[key] as Array<{ plugin?: string }>, name, (staged.declarations[key] ?? []) as Array<{ plugin?: string }>, order);
  }
  for (const c of before.callables) counterRegistry.unregisterCallable(c.category, c.name);
  for (const c of staged.declarations.callables) counterRegistry.registerCallable(c.category, c.name, c.description, c.fn);
  // Counters are the process's and survive: only ones the new version defines and nobody made yet are created.
  for (const c of staged.declarations.counters) {
    if (native.counterGet(c.category, c.name) === null) native.counterUpdate(c.category, c.name, c.initial, !Number.isSafeInteger(c.initial), c.description);
  }
  staged.commit();
}

/** The plugin's flags: one defined again with the same type keeps its value; a removed one goes. */
function commitFlags(thread: ThreadContext, staged: StagedPlugin): void {
  const { flags } = thread.runtime;
  const owners = thread.registration.flagOwners;
  for (const [flag, plugin] of [...owners]) {
    if (plugin !== staged.name || staged.flags.has(flag)) continue;
    flags.remove(flag);
    owners.delete(flag);
  }
  for (const [flag, f] of staged.flags) {
    const prior = flags.info(flag);
    const value = prior !== undefined && prior.type === f.spec.type ? prior.value : f.value;
    if (prior !== undefined) flags.remove(flag);
    flags.define(flag, f.spec, value, f.mutable);
    owners.set(flag, staged.name);
  }
}
