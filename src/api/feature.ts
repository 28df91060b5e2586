/**
 * The API-service REST groups as a built-in feature: counters (with the built-in categories
 * and threshold monitors), event profiling, runtime configuration and Prometheus metrics.
 */
import { PluginError } from '../errors.ts';
import { counterRegistry } from '../counters/registry.ts';
import { registerBuiltinCounters } from '../counters/builtins.ts';
import { CounterMonitor } from '../counters/monitor.ts';
import { setActiveMonitor } from '../plugins/api.ts';
import type { Feature } from '../features.ts';
import { registerCounterRoutes } from './counters.ts';
import { registerProfilingRoutes } from './profiling.ts';
import { registerConfigurationRoutes } from './configurations.ts';
import { registerMetricsRoute } from './metrics.ts';

export const apiFeature: Feature = {
  name: 'api-service',
  start({ manifest, host, api }) {
    const cs = manifest.components.CounterService!;
    const { flags, log } = host;
    const stopBuiltins = registerBuiltinCounters(counterRegistry, cs.refresh_interval_in_sec as number);
    const monitor = new CounterMonitor(counterRegistry, log, cs.counter_monitoring_interval_in_sec as number);
    monitor.add('event', 'event_queue_length', cs.warning_threshold_event_queue_length as number, true);
    monitor.add('object', 'outstanding_fetch_query', cs.warning_threshold_outstanding_fetch_query as number, true);
    monitor.add('object', 'outstanding_update_query', cs.warning_threshold_outstanding_update_query as number, true);
    for (const m of host.declarations.monitors) {
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

    registerCounterRoutes(api.router, counterRegistry);
    registerProfilingRoutes(api.router, flags);
    registerConfigurationRoutes(api.router, flags);
    registerMetricsRoute(api.router, counterRegistry, () => flags.get<boolean>('enable_event_profiler'));
    return {
      stop() {
        monitor.stop();
        setActiveMonitor(null);
        stopBuiltins();
        counterRegistry.clear();
      },
    };
  },
};
