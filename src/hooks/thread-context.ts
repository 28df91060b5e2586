/**
 * What one thread's context is: flags, logger, event runtime and the registered plugins. The
 * main thread and every event worker build one from the same manifest (src/thread-setup.ts);
 * the features below the composition read it through this type.
 */
import type { Manifest } from '../config/manifest.ts';
import type { FlagRegistry } from '../config/flags.ts';
import type { Logger } from '../log/logger.ts';
import type { EventRuntime } from '../events/runtime.ts';
import type { Declarations, RegistrationContext } from '../plugins/api.ts';
import type { LoadedPlugin } from '../plugins/loader.ts';

export type ThreadManifest = Pick<Manifest, 'file' | 'dir' | 'components' | 'plugins'>;

export interface ThreadContext {
  manifest: ThreadManifest;
  flags: FlagRegistry;
  log: Logger;
  runtime: EventRuntime;
  declarations: Declarations;
  plugins: LoadedPlugin[];
  /** Who registered what on this thread (a plugin reload replaces one plugin's part). */
  registration: RegistrationContext;
}
