/**
 * The API-service REST groups as a built-in feature. What runs follows the manifest's list:
 *   ApiService            event profiling (SPEC 4.5) and `/v1/status`
 *   CounterService        counters (SPEC 4.4) with the built-in categories, threshold monitors,
 *                         Prometheus metrics and the dashboard
 *   RuntimeConfiguration  runtime configuration (SPEC 4.2)
 * The manifest check makes sure the last two are listed only with ApiService.
 */
import { PluginError } from '../../errors.ts';
import { ManifestError } from '../../config/manifest.ts';
import { counterRegistry } from '../../counters/registry.ts';
import { registerBuiltinCounters } from '../../counters/builtins.ts';
import { CounterMonitor, setActiveMonitor } from '../../counters/monitor.ts';
import { onPluginSwap } from '../../hooks/reload-hooks.ts';
import type { Feature, FeatureContext, RunningFeature } from '../../features.ts';
import { registerCounterRoutes } from './counters.ts';
import { registerProfilingRoutes } from './profiling.ts';
import { registerConfigurationRoutes } from './configurations.ts';
import { registerMetricsRoute } from './metrics.ts';
import { createLineLimiter } from '../../log/rate-limit.ts';

export const apiFeature: Feature = {
  name: 'api-service',
  start(ctx) {
    const { manifest, thread, api } = ctx;
    if (manifest.listed.has('ApiService')) registerProfilingRoutes(api.router, thread.flags);
    if (manifest.listed.has('RuntimeConfiguration')) registerConfigurationRoutes(api.router, thread.flags);
    if (manifest.listed.has('CounterService')) return startCounterService(ctx);
    // Callable counters that plugins registered are still the process's; a stop forgets them.
    const forget = (): void => counterRegistry.clear();
    const monitored = thread.declarations.monitors[0];
    if (monitored !== undefined) {
      forget();
      throw new ManifestError(`${manifest.file}: plugin '${monitored.plugin}' monitors counter '${monitored.category}/${monitored.name}', ` +
        'which needs the CounterService component; list CounterService');
    }
    return { stop: forget };
  },
};

/** Built-in counters, monitors, the counter routes and `/metrics` (component `CounterService`). */
function startCounterService({ manifest, thread, api, watchdog }: FeatureContext): RunningFeature {
  const cs = manifest.components.CounterService!;
  const { flags, log } = thread;
  const stopBuiltins = registerBuiltinCounters(counterRegistry, cs.refresh_interval_in_sec as number, {
    listRunning: manifest.components.EventDispatcher!.enable_outstanding_event_profiler as boolean,
    outstanding: (listRunning) => watchdog.outstanding(listRunning),
  });
  const monitor = new CounterMonitor(counterRegistry, log, cs.counter_monitoring_interval_in_sec as number);
  monitor.add('event', 'event_queue_length', cs.warning_threshold_event_queue_length as number, true);
  monitor.add('object', 'outstanding_fetch_query', cs.warning_threshold_outstanding_fetch_query as number, true);
  monitor.add('object', 'outstanding_update_query', cs.warning_threshold_outstanding_update_query as number, true);
  for (const m of thread.declarations.monitors) {
    try {
      monitor.add(m.category, m.name, m.threshold);
    } catch (err) {
      stopBuiltins();
      counterRegistry.clear();
      throw new PluginError(m.plugin, 'monitor', err, { subject: `${m.category}/${m.name}` });
    }
  }
  monitor.start();
  setActiveMonitor(monitor);
  // A reloaded plugin's monitors replace its old ones (the reload checked their counters exist).
  const unhookReload = onPluginSwap(({ before, after }) => {
    for (const m of before.declarations.monitors) monitor.remove(m.category, m.name);
    for (const m of after.declarations.monitors) monitor.add(m.category, m.name, m.threshold);
  });
  const readErrors = createLineLimiter({ perKeyPerSecond: 1, log: thread.log });
  counterRegistry.onReadError = (category, name, err) =>
    readErrors.error(`${category}/${name}`, `counter ${category}/${name}: its callback failed (left out of the reading): ${err instanceof Error ? err.message : String(err)}`);
  registerCounterRoutes(api.router, counterRegistry);
  registerMetricsRoute(api.router, counterRegistry, () => flags.get<boolean>('enable_event_profiler'));
  return {
    stop() {
      counterRegistry.onReadError = null;
      readErrors.close();
      unhookReload();
      monitor.stop();
      setActiveMonitor(null);
      stopBuiltins();
      counterRegistry.clear();
    },
  };
}
