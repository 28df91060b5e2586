/**
 * Builds one thread's context (src/hooks/thread-context.ts): flags, logger, event runtime and the
 * registered plugins. The main thread and every event worker build one from the same manifest;
 * this file is the composition of a thread, so it sits above the features it registers.
 */
import { ManifestError } from './config/manifest.ts';
import { buildFlags } from './config/flag-setup.ts';
import { createLogger, logDescriptor } from './log/logger.ts';
import { native } from './native.ts';
import { logFileOf, openManifestLog } from './log/log-file.ts';
import { EventRuntime } from './events/runtime.ts';
import { emptyDeclarations, type RegistrationContext } from './plugins/api.ts';
import { loadPlugins } from './plugins/loader.ts';
import type { ThreadContext, ThreadManifest } from './hooks/thread-context.ts';
import { registerPluginApiPart } from './hooks/plugin-api-parts.ts';
import { createAccountApi, createSessionApi } from './session/plugin-api.ts';
import { createAuthApi } from './auth/client/plugin-api.ts';
import { createObjectsApi } from './objects/plugin-api.ts';
import { createHttpApi } from './api/plugin-routes.ts';
import { createConsoleApi } from './console/plugin-api.ts';
import { createClusterApi } from './cluster/plugin-api.ts';

// The features hand their parts of the plugin API over here, on every thread, before any plugin loads.
registerPluginApiPart('sessions', createSessionApi);
registerPluginApiPart('accounts', (_plugin, rt) => createAccountApi(rt));
registerPluginApiPart('auth', (_plugin, rt) => createAuthApi(rt));
registerPluginApiPart('objects', (_plugin, rt) => createObjectsApi(rt));
registerPluginApiPart('http', createHttpApi);
registerPluginApiPart('console', createConsoleApi);
registerPluginApiPart('cluster', (_plugin, rt) => createClusterApi(rt));

/** Builds this thread's context and registers every plugin on it. */
export async function createThreadContext(manifest: ThreadManifest, role: 'main' | 'worker', pluginFiles: string[]): Promise<ThreadContext> {
  const flags = buildFlags(manifest.components);
  const logFile = logFileOf(manifest);
  const logProblem = openManifestLog(logFile, manifest.file, manifest.components.Logging?.log_file);
  if (logProblem !== null) throw new ManifestError(logProblem);
  const format = (manifest.components.Logging?.log_format as 'text' | 'json' | undefined) ?? 'text';
  const log = createLogger(flags, { file: logFile, format });
  // Native plugins' lines outside a call (their own threads, late writers) go to the same log.
  if (role === 'main') {
    native.logTarget(logDescriptor(logFile), format === 'json', Number(flags.get('minloglevel')), flags.get('alsologtostderr') === true);
  }
  const runtime = new EventRuntime(role, flags, log);
  const additional = new Set((manifest.components.RuntimeConfiguration?.additional_configurations as string[] | undefined) ?? []);
  const context: RegistrationContext = {
    runtime,
    declarations: emptyDeclarations(),
    eventOwners: new Map(),
    flagOwners: new Map(),
    additionalConfigurations: additional,
    registering: false,
  };
  const plugins = await loadPlugins(pluginFiles, context);
  if (role === 'main') {
    for (const name of additional) {
      if (!context.flagOwners.has(name)) {
        throw new ManifestError(`${manifest.file}: RuntimeConfiguration.additional_configurations names '${name}', which no plugin defines as a flag`);
      }
    }
  }
  return { manifest, flags, log, runtime, declarations: context.declarations, plugins, registration: context };
}
