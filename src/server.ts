/**
 * A running gsf server: manifest → flags and plugins (main thread) → event workers →
 * API-service listener → plugins' start hooks. One server per process (the native core is
 * process-global).
 */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { native } from './native.ts';
import { ManifestError, loadManifest, parseManifest, secretProblem, type Manifest } from './config/manifest.ts';
import { createThreadContext } from './thread-setup.ts';
import type { ThreadContext } from './hooks/thread-context.ts';
import { resolvePluginFiles, unlistedPluginFolders } from './plugins/loader.ts';
import { Dispatcher } from './events/main/dispatcher.ts';
import { Watchdog, type OutstandingEvents } from './events/main/watchdog.ts';
import { awaitedAnswers, resetAwaitedAnswers } from './events/wake.ts';
import { manifestMaintenanceRecord } from './maintenance/state.ts';
import { ApiServer } from './api/main/server.ts';
import type { Logger } from './log/logger.ts';
import { GsfError, PluginError, describeError, gsfError } from './errors.ts';
import { closeHandlerServices } from './api/main/dispatch.ts';
import { FEATURES, type RunningFeature } from './features.ts';
import type { InvokeOptions } from './events/types.ts';
import type { WorkerInit } from './events/types.ts';
import { startObjectStore, type ObjectStore } from './objects/store.ts';
import { PluginReloader } from './plugins/reload.ts';
import type { ReloadOutcome } from './plugins/reload-answers.ts';
import { endAllNativeHoldings, setNativeStopBudget } from './plugins/native-lifecycle.ts';
import { registerPluginRoutes } from './api/main/plugins.ts';
import type { PluginSource } from './plugins/reload-source.ts';

export interface StartOptions {
  /** Path of a MANIFEST.json. */
  manifestPath?: string;
  /** SIGHUP reloads every plugin whose source changed (default true; false leaves SIGHUP alone). */
  reloadOnSighup?: boolean;
  /** An inline manifest object (tests, embedding); `dir` is where relative paths resolve. */
  manifest?: unknown;
  dir?: string;
}

let running: GsfServer | null = null;

export class GsfServer {
  private stopped: Promise<void> | null = null;
  private readonly startedAt = Date.now();
  /** The object store, when object types are declared; stopped after the event queue drains. */
  private objects: ObjectStore | null = null;
  /** Plugin hot reload; set once the event threads run. */
  reloader: PluginReloader | null = null;
  private onHangup: (() => void) | null = null;

  private constructor(
    readonly manifest: Manifest,
    readonly thread: ThreadContext,
    readonly dispatcher: Dispatcher,
    readonly watchdog: Watchdog,
    readonly api: ApiServer,
  ) {}

  /** Started features, in start order. */
  private readonly features: Array<{ name: string; running: RunningFeature }> = [];

  /** Loads the manifest and plugins, starts the workers and listeners. */
  static async start(options: StartOptions = {}): Promise<GsfServer> {
    if (running !== null) throw new Error('a gsf server is already running in this process');
    const manifest = options.manifest !== undefined
      ? parseManifest(options.manifest, '(inline manifest)', path.resolve(options.dir ?? process.cwd()))
      : loadManifest(options.manifestPath ?? 'MANIFEST.json');
    const pluginFiles = resolvePluginFiles(manifest);
    // A bad maintenance file stops the start now, before any thread starts.
    manifestMaintenanceRecord(manifest);
    native.pluginOutsideCalls(true);
    resetAwaitedAnswers();
    const thread = await createThreadContext(manifest, 'main', pluginFiles);
    const { flags, log } = thread;
    const unlisted = unlistedPluginFolders(manifest);
    if (unlisted.length > 0) {
      log.info(`not loaded: ${unlisted.map((n) => `plugins/${n}`).join(', ')} (${manifest.file} lists the plugins a start loads)`);
    }

    native.profilerEnable(flags.get<boolean>('enable_event_profiler'));
    // Event threads read a change at their next flag read: the stamp moves once it is published.
    const configStamp = new Int32Array(new SharedArrayBuffer(4));
    const publish = (): void => {
      native.configSet(JSON.stringify(flags.snapshot()));
      Atomics.add(configStamp, 0, 1);
    };
    publish();

    const init: WorkerInit = {
      manifest: { file: manifest.file, dir: manifest.dir, components: manifest.components, plugins: manifest.plugins, listed: [...manifest.listed] },
      pluginFiles,
      contextModule: fileURLToPath(new URL('./thread-setup.ts', import.meta.url)),
      configStamp,
    };
    const dispatcher = new Dispatcher(thread, init);
    const ed = manifest.components.EventDispatcher!;
    setNativeStopBudget(ed.shutdown_drain_timeout_in_ms as number);
    const watchdog = new Watchdog(thread, dispatcher, {
      timeoutMs: ed.event_timeout_in_ms as number,
      checker: ed.enable_event_thread_checker as boolean,
      hangThresholdMs: ed.event_thread_hang_threshold_in_ms as number,
      hangReportIntervalMs: ed.event_thread_hang_report_interval_in_ms as number,
    }, thread.declarations.timeoutHandlers);
    const apiArgs = manifest.components.ApiService!;
    const token = apiToken(apiArgs.api_service_token as string);
    const api = new ApiServer({
      address: apiArgs.api_service_address as string,
      port: apiArgs.api_service_port as number,
      maxBodyBytes: apiArgs.api_service_max_body_bytes as number,
      token,
      log,
    });
    const server = new GsfServer(manifest, thread, dispatcher, watchdog, api);
    running = server;
    try {
      flags.onChange('*', publish);
      flags.onChange('enable_event_profiler', (_n, v) => native.profilerEnable(v as boolean));
      // The REST change answers once the new threads serve, or with why not (the value stays).
      flags.setApplier('event_threads_size', (v) => dispatcher.resize(v as number));
      flags.onChange('event_threads_size', (_n, v) => {
        dispatcher.resize(v as number).catch((err: unknown) => {
          log.error(`event thread resize to ${String(v)} failed, ${dispatcher.size} serve on: ${describeError(err)}`);
          if (flags.get('event_threads_size') === v) flags.set('event_threads_size', dispatcher.size);
        });
      });
      api.router.get('/v1/status', () => ({ status: 200, body: server.status() }));
      registerPluginRoutes(api.router, () => server.reloader);

      server.objects = await startObjectStore(manifest, pluginFiles, log);
      const objects = server.objects;
      if (objects !== null) {
        // An ended event thread's channel to the object writer is let go.
        dispatcher.addEndHooks({
          reserve: (threadId) => threadId,
          recover: (threadId, ended) => {
            if (ended) objects.threadEnded(threadId as number);
          },
        });
      }
      await dispatcher.start();
      server.reloader = new PluginReloader(thread, dispatcher, { counterService: manifest.listed.has('CounterService'), publishFlags: publish });
      const reloader = server.reloader;
      dispatcher.sourceCheck = () => reloader.checkLoadedSources();
      watchdog.start();
      const apiListed = manifest.listed.has('ApiService');
      if (apiListed) await api.listen();
      for (const c of thread.declarations.counters) {
        if (native.counterGet(c.category, c.name) === null) {
          native.counterUpdate(c.category, c.name, c.initial, !Number.isSafeInteger(c.initial), c.description);
        }
      }
      const listening: Record<string, string> = { api: apiListed ? `${apiArgs.api_service_address as string}:${api.port}` : 'none', websocket: 'none' };
      for (const feature of FEATURES) {
        const started = (await feature.start({ manifest, thread, dispatcher, watchdog, api })) ?? {};
        server.features.push({ name: feature.name, running: started });
        Object.assign(listening, started.listening);
      }
      server.reloader.startTimers();
      for (const { plugin, fn } of thread.declarations.onStart) {
        try {
          await fn();
        } catch (err) {
          throw new PluginError(plugin, 'start hook', err);
        }
      }
      log.info(`listening ${Object.entries(listening).map(([k, v]) => `${k}=${v}`).join(' ')}`,
        { plugins: thread.plugins.map((p) => `${p.name}@${p.version}`), event_threads: dispatcher.size });
      if (apiListed && token === '') {
        log.warn('API service authentication is off: ApiService.api_service_token is empty and GSF_API_TOKEN is unset, so every request '
          + `to ${apiArgs.api_service_address as string}:${api.port} is served (set a token to require Authorization: Bearer <token>)`);
      }
      if (options.reloadOnSighup !== false) {
        server.onHangup = () => server.reloadInBackground('SIGHUP');
        process.on('SIGHUP', server.onHangup);
      }
      return server;
    } catch (err) {
      await server.stop();
      throw err;
    }
  }

  /** Queues an event from outside any event (SPEC 6.2.4c: a random tag unless given). */
  invoke(event: string, payload?: unknown, options?: InvokeOptions): number {
    return this.thread.runtime.invoke(event, payload, options);
  }

  /**
   * Reloads the named plugins, or every plugin whose source changed (docs/guides/hot-reload.md); the
   * same as `POST /v1/plugins/reload` and `POST /v1/plugins/{name}/reload`.
   */
  reloadPlugins(names: readonly string[] | null = null, force = false): Promise<ReloadOutcome> {
    if (this.reloader === null || this.stopped !== null) return Promise.reject(gsfError('GSF_ERR_RELOAD_UNAVAILABLE', 'the server is not running'));
    return this.reloader.reload(names, force);
  }

  /** The running plugins' sources (the `--watch` file watcher). */
  pluginSources(): PluginSource[] {
    return this.reloader?.sources() ?? [];
  }

  /** Reloads every changed plugin for a signal or a file watcher, logging the outcome. */
  reloadInBackground(why: string): Promise<ReloadOutcome | 'busy' | null> {
    const { log } = this.thread;
    log.info(`${why}: reloading every plugin whose source changed`);
    return this.reloadPlugins().then((outcome) => {
      if (outcome.reloaded.length === 0) log.info(`${why}: no plugin's source changed`);
      return outcome;
    }, (err: unknown) => {
      // A refusal (GSF_ERR_RELOAD_FAILED) is logged where it is made.
      if (!(err instanceof GsfError && err.code === 'GSF_ERR_RELOAD_FAILED')) log.warn(`${why}: ${describeError(err)}`);
      // Another reload is running: the caller may ask again once it is done (--watch does).
      return err instanceof GsfError && err.code === 'GSF_ERR_RELOAD_RUNNING' ? 'busy' : null;
    });
  }

  /** Outstanding events: the count, and the running ones when the outstanding profiler is on. */
  outstandingEvents(): OutstandingEvents {
    return this.watchdog.outstanding(this.manifest.components.EventDispatcher!.enable_outstanding_event_profiler as boolean);
  }

  /** A small health document (GET /v1/status). */
  status(): Record<string, unknown> {
    const q = native.queueStats();
    return {
      plugins: this.thread.plugins.map((p) => ({ name: p.name, version: p.version })),
      event_threads_size: this.dispatcher.size,
      uptime_in_sec: Math.round((Date.now() - this.startedAt) / 1000),
      queue: { waiting: q.waiting, outstanding: q.outstanding, inflow_per_sec: q.inflow_per_sec, throughput_per_sec: q.throughput_per_sec },
    };
  }

  /**
   * Stops gracefully: refuses new events from outside, stops timers, runs stop hooks, lets
   * queued events (and the events they create) finish within the drain limit, closes workers.
   */
  stop(): Promise<void> {
    this.stopped ??= this.doStop();
    return this.stopped;
  }

  private async doStop(): Promise<void> {
    const { thread, dispatcher } = this;
    thread.runtime.stopping = true;
    // A SIGHUP while the server stops is refused with a line, not left to its default action
    // (which ends the process and loses the drain).
    const hangupWhileStopping = (): void => thread.log.warn('SIGHUP: plugin reload is unavailable: the server is stopping');
    if (this.onHangup !== null) {
      process.off('SIGHUP', this.onHangup);
      process.on('SIGHUP', hangupWhileStopping);
    }
    dispatcher.stopTimers();
    // Timers fire no more: one an onStop hook or an event of the drain starts is not started
    // (`after`/`every` return 0), and the stop says how many.
    const refusedBefore = native.timersRefusedAtStop();
    native.timersStop();
    for (const { name, running: feature } of this.features.reverse()) {
      try {
        await feature.stop?.();
      } catch (err) {
        thread.log.error(`stopping ${name} failed: ${describeError(err)}`);
      }
    }
    // No new connections; requests open on the API service are answered as their events end.
    this.api.stopListening();
    const limit = this.manifest.components.EventDispatcher!.shutdown_drain_timeout_in_ms as number;
    // The hooks may still invoke events (a last save): they run in the drain.
    thread.runtime.stopping = 'hooks';
    for (const { plugin, fn } of thread.declarations.onStop) await runStopHook(plugin, fn, limit, thread.log);
    thread.runtime.stopping = true;
    native.pluginOutsideCalls(false);
    const deadline = Date.now() + limit;
    while (!dispatcher.idle() && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
    const left = native.queueStats();
    const awaited = awaitedAnswers();
    const dropped = left.waiting + left.outstanding + awaited;
    if (dropped > 0) {
      const answers = awaited > 0 ? ` and ${awaited} authentication callback(s) on their way` : '';
      const commits = this.objects !== null && left.outstanding > 0
        ? ' (a commit one of them had handed to the object writer is still written, without the counter changes and invokes that waited for it)' : '';
      thread.log.warn(`stopping with ${left.waiting} queued and ${left.outstanding} running event(s)${answers} after ${limit} ms: they are dropped${commits}`);
      native.counterIncrease('engine', 'events_dropped_at_stop', dropped);
    }
    const refusedTimers = native.timersRefusedAtStop() - refusedBefore;
    if (refusedTimers > 0) {
      thread.log.warn(`stopping: ${refusedTimers} timer(s) started after the stop began (by onStop hooks or events of the drain) were not started: timers end when a stop begins`);
      native.counterIncrease('engine', 'timers_not_started_at_stop', refusedTimers);
    }
    this.watchdog.stop();
    // Events still running at the limit end with their threads at once, as a timed-out event
    // does: what they would do later (their object changes included) is not done.
    await dispatcher.close(dropped > 0 ? 0 : undefined);
    // Requests whose events never answered get 503, then every API connection is closed.
    closeHandlerServices(dispatcher);
    this.api.close();
    // Every event has ended: native timers and continuations still held end, their user data released.
    endAllNativeHoldings();
    this.reloader?.stop();
    // Every event has ended, so every commit is queued: the writer applies them before it closes
    // (a commit waiting on a lock held elsewhere is not waited for past another drain limit).
    await this.objects?.stop(limit);
    // Then what runs until the last commit (the cluster's announcements of commits) ends.
    for (const { name, running: feature } of this.features) {
      try {
        await feature.closeAfterObjects?.();
      } catch (err) {
        thread.log.error(`stopping ${name} failed: ${describeError(err)}`);
      }
    }
    native.queueReset();
    running = null;
    if (this.onHangup !== null) process.off('SIGHUP', hangupWhileStopping);
  }
}

/**
 * Runs a plugin's onStop hook, waiting at most `limitMs` (as a native on_stop is given): a hook
 * that fails or has not settled by then is logged, and the stop goes on.
 */
async function runStopHook(plugin: string, fn: () => unknown, limitMs: number, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const LATE = Symbol('late');
  // A native on_stop's own deadline is the same limit and logs its own line: it ends first.
  const late = new Promise<typeof LATE>((resolve) => { timer = setTimeout(() => resolve(LATE), limitMs + 50); });
  try {
    const outcome = await Promise.race([Promise.resolve().then(fn), late]);
    if (outcome === LATE) {
      log.error(`plugin '${plugin}' onStop had not settled by its deadline (${limitMs} ms, `
        + 'EventDispatcher.shutdown_drain_timeout_in_ms): gsf goes on without waiting for it');
    }
  } catch (err) {
    log.error(`GSF_ERR_HANDLER_FAILED: ${new PluginError(plugin, 'stop hook', err).message}`);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts a server (see `GsfServer.start`). */
export function startServer(options?: StartOptions): Promise<GsfServer> {
  return GsfServer.start(options);
}

/** The API-service token: the manifest's, else GSF_API_TOKEN's (checked as the manifest's is); empty: none. */
function apiToken(fromManifest: string): string {
  if (fromManifest !== '') return fromManifest;
  const env = process.env.GSF_API_TOKEN ?? '';
  const problem = secretProblem(env);
  if (problem !== null) throw new ManifestError(`GSF_API_TOKEN (standing in for ApiService.api_service_token) ${problem}`);
  return env;
}
