/**
 * Event-profiling REST (SPEC 4.5), only while `enable_event_profiler` is true:
 *   GET  /v1/counters/engine/event/profiling/summary/        {"all_time": {...}, "last1min": {...}}
 *   GET  /v1/counters/engine/event/profiling/each/{event}    {"<event>": {"all_time", "last1min"}}
 *   GET  /v1/counters/engine/event/profiling/all             {"<event>": {...}, ...}
 *   GET  /v1/counters/engine/event/profiling/order_by_*      [{"event_name", "all_time", "last1min"}, ...]
 *   POST /v1/counters/engine/event/profiling/reset           {"reset": true}
 */
import { native, ProfileOrder, type ProfileOrderValue } from '../../native.ts';
import { gsfError } from '../../errors.ts';
import type { ApiResponse, RouteHandler, Router } from './router.ts';
import type { FlagRegistry } from '../../config/flags.ts';

const BASE = '/v1/counters/engine/event/profiling';

export const ORDERINGS: Record<string, ProfileOrderValue> = {
  order_by_execution_time_sum: ProfileOrder.executionTimeSum,
  order_by_handler_time_sum: ProfileOrder.handlerTimeSum,
  order_by_io_wait_time_sum: ProfileOrder.ioWaitTimeSum,
  order_by_execution_time: ProfileOrder.executionTime,
  order_by_handler_time: ProfileOrder.handlerTime,
  order_by_io_wait_time: ProfileOrder.ioWaitTime,
};

export function registerProfilingRoutes(router: Router, flags: FlagRegistry): void {
  const guarded = (handler: RouteHandler): RouteHandler => (req) => {
    if (!flags.get<boolean>('enable_event_profiler')) throw gsfError('GSF_ERR_PROFILER_DISABLED');
    return handler(req);
  };

  router.get(`${BASE}/summary`, guarded(() => ({ status: 200, body: native.profilerSummary() })));
  router.get(`${BASE}/each/{event*}`, guarded((req): ApiResponse => {
    // Any name, '/' included: a trailing '/' of the URL never reaches the parameter, one
    // written %2F does ('trail%2F' is the event 'trail/').
    const name = req.params.event!;
    const profile = native.profilerEvent(name);
    if (!profile) throw gsfError('GSF_ERR_PROFILE_NOT_FOUND', name);
    return { status: 200, body: { [name]: profile } };
  }));
  router.get(`${BASE}/all`, guarded(() => ({ status: 200, body: Object.fromEntries(native.profilerAll(ProfileOrder.none)) })));
  for (const [path, order] of Object.entries(ORDERINGS)) {
    router.get(`${BASE}/${path}`, guarded(() => ({
      status: 200,
      body: native.profilerAll(order).map(([event_name, p]) => ({ event_name, ...p })),
    })));
  }
  router.post(`${BASE}/reset`, guarded(() => {
    native.profilerReset();
    return { status: 200, body: { reset: true } };
  }));
}
