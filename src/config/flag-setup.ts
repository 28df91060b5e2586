/** Builds the flag registry of one thread from a manifest. */
import { FlagRegistry } from './flags.ts';
import { COMPONENTS, STANDALONE_FLAGS } from './schema.ts';
import type { ComponentArgs } from './manifest.ts';

/** Every built-in flag, valued from the manifest's components (defaults filled in). */
export function buildFlags(components: Record<string, ComponentArgs>): FlagRegistry {
  const flags = new FlagRegistry();
  for (const [component, schema] of Object.entries(COMPONENTS)) {
    for (const [arg, spec] of Object.entries(schema)) {
      if (spec.flag) flags.define(arg, spec, components[component]?.[arg] ?? spec.default, spec.flag.mutable);
    }
  }
  for (const [name, spec] of Object.entries(STANDALONE_FLAGS)) {
    flags.define(name, spec, spec.default, spec.flag?.mutable ?? false);
  }
  return flags;
}
