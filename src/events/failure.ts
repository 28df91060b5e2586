/**
 * How a failing plugin handler is reported: one wording for every stage, naming the plugin,
 * what failed and the plugin's own stack (its file and line), never gsf's wrapper around it.
 */
import { describeError } from '../errors.ts';

/** A plugin handler failed; thrown by engine wrappers (the session message event) so the log names the plugin. */
export class PluginFailure extends Error {
  constructor(readonly plugin: string, readonly stage: string, readonly target: string, cause: unknown) {
    super(`GSF_ERR_HANDLER_FAILED: plugin '${plugin}' ${stage} '${target}' failed: ${describeError(cause)}`, { cause });
    this.name = 'PluginFailure';
  }

  /** The stack of what the plugin threw (or its text when it threw no Error). */
  get pluginStack(): string {
    const cause = this.cause;
    return cause instanceof Error && cause.stack ? cause.stack : describeError(cause);
  }
}

/** The failure of `err` thrown by handler `target` of `plugin`; engine wrappers' own failures pass through. */
export function pluginFailure(plugin: string, stage: string, target: string, err: unknown): PluginFailure {
  if (err instanceof PluginFailure) return err;
  return new PluginFailure(plugin, stage, target, err);
}
