/**
 * A plugin reload's part in the console registrations (main thread). The new version registers
 * into a registry of its own while it is staged; its operations, campaign types and custom
 * queries are checked against the other plugins' before the switch, and at the switch its
 * registrations replace the old version's on both sides.
 */
import { gsfError } from '../errors.ts';
import type { ConsoleRegistry, ConsoleSide, ConsoleSideName } from './registry.ts';

const SIDES: readonly ConsoleSideName[] = ['managed', 'native'];

/** A staged plugin's console registrations. */
export interface StagedConsole {
  name: string;
  console: ConsoleRegistry;
}

/** Who owns each operation, campaign type and custom query of a side, as `kind\0name` → plugin. */
function ownersOf(side: ConsoleSide, skip: ReadonlySet<string>): Map<string, string> {
  const owners = new Map<string, string>();
  for (const [op, plugin] of side.operations) if (!skip.has(plugin)) owners.set(`console operation\0${op}`, plugin);
  for (const [type, c] of side.campaigns) if (!skip.has(c.plugin)) owners.set(`campaign type\0${type}`, c.plugin);
  for (const q of side.queries.values()) if (!skip.has(q.plugin)) owners.set(`custom query\0${q.method} ${q.path}`, q.plugin);
  return owners;
}

/**
 * The first name a staged plugin (in reload order) registers for the console that another
 * plugin owns (one not reloaded, or one staged before it), or null.
 */
export function consoleClash(live: ConsoleRegistry, staged: readonly StagedConsole[], reloaded: ReadonlySet<string>): { plugin: string; error: Error } | null {
  for (const sideName of SIDES) {
    const owners = ownersOf(live[sideName], reloaded);
    for (const s of staged) {
      for (const key of ownersOf(s.console[sideName], new Set()).keys()) {
        const owner = owners.get(key);
        const [what, name] = key.split('\0') as [string, string];
        if (owner !== undefined) return { plugin: s.name, error: gsfError('GSF_ERR_PLUGIN_DUPLICATE', s.name, what, name, owner) };
        owners.set(key, s.name);
      }
    }
  }
  return null;
}

function replaceOwned<V>(map: Map<string, V>, fresh: ReadonlyMap<string, V>, owned: (v: V) => boolean): void {
  for (const [key, value] of [...map]) if (owned(value)) map.delete(key);
  for (const [key, value] of fresh) map.set(key, value);
}

/**
 * Replaces `plugin`'s console registrations in `live` by the staged ones (at the switch). The
 * rule sets are rebuilt in place from every plugin's part, in plugin order (`order`), so
 * whoever holds them (the console's request checks) sees the new rules.
 */
export function replaceConsole(live: ConsoleRegistry, staged: ConsoleRegistry, plugin: string, order: readonly string[]): void {
  for (const sideName of SIDES) {
    const side = live[sideName];
    const fresh = staged[sideName];
    replaceOwned(side.operations, fresh.operations, (p) => p === plugin);
    replaceOwned(side.campaigns, fresh.campaigns, (c) => c.plugin === plugin);
    replaceOwned(side.queries, fresh.queries, (q) => q.plugin === plugin);
    side.plugins.delete(plugin);
    if (fresh.plugins.has(plugin)) side.plugins.add(plugin);
    side.parts.delete(plugin);
    const part = fresh.parts.get(plugin);
    if (part !== undefined) side.parts.set(plugin, part);
    rebuildRules(side, order);
  }
}

/** The side's rule sets again, as the union of the plugins' parts. */
function rebuildRules(side: ConsoleSide, order: readonly string[]): void {
  const rank = (p: string): number => { const r = order.indexOf(p); return r < 0 ? order.length : r; };
  const parts = [...side.parts].sort(([a], [b]) => rank(a) - rank(b)).map(([, part]) => part);
  for (const key of ['editableUser', 'editableCharacter', 'noticeCategories', 'missionNormal', 'missionAchievement'] as const) {
    side[key].clear();
    for (const part of parts) for (const v of part[key]) side[key].add(v);
  }
  side.giftable.clear();
  for (const part of parts) for (const [item, name] of part.giftable) side.giftable.set(item, name);
}
