/**
 * How a failing plugin handler is reported: one wording for every stage (`PluginError`),
 * naming the plugin, what failed and the plugin's own stack (its file and line), never the
 * engine's wrapper around it.
 */
import { describeError, PluginError } from '../errors.ts';

/** The failure of `err` thrown by handler `subject` of `plugin`; an engine wrapper's PluginError passes through. */
export function pluginFailure(plugin: string, stage: string, subject: string, err: unknown): PluginError {
  if (err instanceof PluginError) return err;
  return new PluginError(plugin, stage, err, { subject });
}

/**
 * A failure a native plugin reported (a status and set_error's text): the message says it all,
 * and no JavaScript stack belongs to it (it would show gsf's own frames only).
 */
export class NativeFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NativeFailure';
  }
}

/** The stack of what the plugin threw (or its text when it threw no Error); none for a native failure. */
export function pluginStack(failure: PluginError): string | undefined {
  const cause = failure.cause;
  if (cause instanceof NativeFailure) return undefined;
  return cause instanceof Error && cause.stack ? cause.stack : describeError(cause);
}
