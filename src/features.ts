/**
 * Built-in features (sessions, REST groups, the authentication client, …) plug into the
 * server here. Each starts after the workers and the API listener are up, and stops, in
 * reverse order, before the event queue drains (what must outlast the last commit, in
 * `closeAfterObjects`).
 */
import type { Manifest } from './config/manifest.ts';
import type { ThreadContext } from './hooks/thread-context.ts';
import type { Dispatcher } from './events/main/dispatcher.ts';
import type { Watchdog } from './events/main/watchdog.ts';
import type { ApiServer } from './api/main/server.ts';
import { dashboardFeature } from './api/main/dashboard.ts';
import { apiFeature } from './api/main/feature.ts';
import { sessionFeature } from './session/main/feature.ts';
import { authFeature } from './auth/client/feature.ts';
import { consoleFeature } from './console/feature.ts';
import { consolePageFeature } from './api/main/console-page.ts';
import { pluginRoutesFeature } from './api/plugin-routes.ts';
import { clusterFeature } from './cluster/feature.ts';

export interface FeatureContext {
  manifest: Manifest;
  thread: ThreadContext;
  dispatcher: Dispatcher;
  watchdog: Watchdog;
  api: ApiServer;
}

export interface RunningFeature {
  /** Listeners to name in the start line, e.g. `{ websocket: '127.0.0.1:8012' }`. */
  listening?: Record<string, string>;
  stop?(): void | Promise<void>;
  /** Runs once the stop's drain has ended and the object writer has written its last commit. */
  closeAfterObjects?(): void | Promise<void>;
}

export interface Feature {
  name: string;
  start(ctx: FeatureContext): RunningFeature | void | Promise<RunningFeature | void>;
}

/** Every built-in feature, in start order. */
export const FEATURES: Feature[] = [
  apiFeature,
  dashboardFeature,
  // Before sessions: the listener joins the cluster before it accepts clients.
  clusterFeature,
  sessionFeature,
  authFeature,
  // Last: plugin routes are checked against every route of gsf's, the console's included.
  consoleFeature,
  consolePageFeature,
  pluginRoutesFeature,
];
