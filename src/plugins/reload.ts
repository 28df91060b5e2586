/**
 * Plugin hot reload (main thread): which plugins run and from which source, and replacing some
 * of them while the server runs and players stay connected.
 *
 * A reload stages the new versions on the main thread (reload-stage.ts), then has the
 * dispatcher load them into a new pool of event threads. Only when every new worker has loaded
 * do the old threads stop taking events: they finish what they claimed and what awaits, the
 * main thread's registrations switch, and the new threads serve the queue from where the old
 * ones left it. Any failure before the switch leaves the old version serving, untouched.
 */
import { native } from '../native.ts';
import { abortable } from '../events/abortable.ts';
import { GsfError, PluginError, describeError, gsfError } from '../errors.ts';
import type { Dispatcher } from '../events/main/dispatcher.ts';
import type { WorkerInit } from '../events/types.ts';
import { sessionOps } from '../session/ops.ts';
import type { ThreadContext } from '../hooks/thread-context.ts';
import { importPlugin } from './loader.ts';
import { applyInitEffects, declareNativeTargets, isNativeLibrary, nativePluginDefinition } from './native-loader.ts';
import { endNativeCopy, retireNativeCopy } from './native-lifecycle.ts';
import { announcePluginSwap } from '../hooks/reload-hooks.ts';
import { checkStaged } from './reload-checks.ts';
import { isDeadline, reloadDeadline, type ReloadProgress } from './reload-deadline.ts';
import {
  changedOnDisk, copyLibrary, dropModules, hashSource, pluginSource, removeCopies, removeCopy, restoreModules,
  type PluginSource, type SavedModules, type SourceHash,
} from './reload-source.ts';
import { commitStaged, currentDeclarations, stagePlugin, stagingOwners, type StagedPlugin } from './reload-stage.ts';
import type { PluginInfo, ReloadOutcome } from './reload-answers.ts';

/** A running plugin. */
interface PluginRecord {
  name: string;
  version: string;
  source: PluginSource;
  /** What event threads load: the entry file, or the fresh copy of a reloaded native library. */
  loadFile: string;
  loadedAt: Date;
  hash: string;
  objectsHash: string;
  reloads: number;
  /** Ids of the timers its `register` declared, started on the main thread. */
  timers: number[];
}

/** A plugin being staged: what to undo if the reload does not go through. */
interface Attempt {
  record: PluginRecord;
  hash: SourceHash;
  staged?: StagedPlugin;
  saved?: SavedModules;
  copy?: string;
  /** Its native copy was loaded and its init ran (`preloadNative`): a refusal retires it. */
  loaded?: boolean;
}

const ms = (from: number): number => Math.round((performance.now() - from) * 10) / 10;

export class PluginReloader {
  /** In load order. */
  private readonly records = new Map<string, PluginRecord>();
  private running: string[] | null = null;
  private stopped = false;

  constructor(private readonly thread: ThreadContext, private readonly dispatcher: Dispatcher,
    private readonly options: { counterService: boolean; publishFlags(): void }) {
    for (const p of thread.plugins) {
      const source = pluginSource(isNativeLibrary(p.file) ? 'native' : 'managed', p.file);
      const { hash, objectsHash } = hashSource(source);
      this.records.set(p.name, {
        name: p.name, version: p.version, source, loadFile: p.file, loadedAt: new Date(), hash, objectsHash, reloads: 0, timers: [],
      });
    }
  }

  /** Starts the timers plugins declared in `register` (server start), remembering them per plugin. */
  startTimers(): void {
    for (const t of this.thread.declarations.timers) {
      const id = this.thread.runtime.addTimer(t.delayMs, t.intervalMs, t.event, t.payload, t.name);
      this.records.get(t.plugin)?.timers.push(id);
    }
  }

  /** The running plugins, in load order. */
  list(): PluginInfo[] {
    return [...this.records.values()].map((r) => {
      let changed: boolean | null;
      try {
        changed = hashSource(r.source).hash !== r.hash;
      } catch {
        changed = null;
      }
      return {
        name: r.name, kind: r.source.kind, version: r.version, file: r.source.file, loaded_at: r.loadedAt.toISOString(),
        hash: r.hash, source_changed: changed, reloads: r.reloads,
      };
    });
  }

  /**
   * Throws when a running managed plugin's files on disk differ from what runs (saved, not
   * reloaded; `except`: the plugins a reload is loading): new event threads read them from
   * disk, and would run other code than the other threads and the main thread.
   */
  checkLoadedSources(except: ReadonlySet<string> = new Set()): void {
    const r = changedOnDisk(this.records.values(), except);
    if (r !== null) {
      throw new Error(`plugin '${r.name}': its files changed on disk since version ${r.version} was loaded, and new event threads `
        + 'would load them: reload it first (POST /v1/plugins/reload), or put the loaded files back');
    }
  }

  /** Where the running plugins' files are (`--watch`). */
  sources(): PluginSource[] {
    return [...this.records.values()].map((r) => r.source);
  }

  /** Stops taking reloads (the server stops) and deletes the library copies. */
  stop(): void {
    this.stopped = true;
    removeCopies();
  }

  /**
   * Reloads the named plugins, or (`names` null) every plugin whose source changed. A named
   * plugin whose source did not change is reloaded only with `force`. All of them switch at
   * once, or none does. Throws a `GsfError` with its HTTP status when it cannot.
   */
  async reload(names: readonly string[] | null, force = false): Promise<ReloadOutcome> {
    const started = performance.now();
    if (this.stopped || this.thread.runtime.stopping) throw gsfError('GSF_ERR_RELOAD_UNAVAILABLE', 'the server is stopping');
    if (this.running !== null) throw gsfError('GSF_ERR_RELOAD_RUNNING', this.running.map((n) => `'${n}'`).join(', '));
    const asked = names === null ? [...this.records.values()] : names.map((n) => this.records.get(n) ?? this.notFound(n));
    const attempts: Attempt[] = [];
    const unchanged: string[] = [];
    for (const record of asked) {
      let hash: SourceHash;
      try {
        hash = hashSource(record.source);
      } catch (err) {
        throw this.refused([record.name], 'load', new Error(`cannot read its files: ${describeError(err)}`, { cause: err }));
      }
      if (hash.hash === record.hash && !(force && names !== null)) unchanged.push(record.name);
      else attempts.push({ record, hash });
    }
    if (attempts.length === 0) return { reloaded: [], unchanged, duration_ms: ms(started), load_ms: 0, warnings: [] };
    this.running = attempts.map((a) => a.record.name);
    const limit = reloadDeadline(this.running, this.dispatcher.loadTimeoutMs, this.thread.log);
    try {
      return await this.swap(attempts, unchanged, started, limit.progress);
    } finally {
      limit.clear();
      this.running = null;
    }
  }

  /**
   * The new version's onStart hooks, after the switch: waited for until the reload's deadline.
   * One still running then cannot hold the reload (and every later one) any longer: the answer
   * says so in its warnings, and the hook runs on.
   */
  private async startHooks(attempts: Attempt[], warnings: string[], deadlineAt: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), Math.max(0, deadlineAt - Date.now())); });
    const done = await Promise.race([this.runHooks(attempts, 'onStart', 'start hook', warnings).then(() => true), late]);
    clearTimeout(timer);
    if (done) return;
    const names = attempts.map((a) => `'${a.record.name}'`).join(', ');
    const warning = `the onStart hooks of ${names} had not finished by the reload's deadline; the new version serves and they run on`;
    warnings.push(warning);
    this.thread.log.warn(`plugin reload: ${warning}`);
  }

  private notFound(name: string): never {
    throw gsfError('GSF_ERR_PLUGIN_NOT_FOUND', name, [...this.records.keys()].map((n) => `'${n}'`).join(', ') || 'none');
  }

  private async swap(attempts: Attempt[], unchanged: string[], started: number, progress: ReloadProgress): Promise<ReloadOutcome> {
    const { thread } = this;
    await this.stage(attempts, progress);
    const warnings: string[] = [];
    const previous = attempts.map((a) => ({ version: a.record.version, hash: a.record.hash }));
    const oldFiles = new Map(attempts.map((a) => [a.record.name, a.record.loadFile]));
    const init: WorkerInit = {
      ...this.dispatcher.workerInit,
      pluginFiles: this.dispatcher.workerInit.pluginFiles.map((f) => attempts.find((a) => a.record.loadFile === f)?.copy ?? f),
    };
    let swapped;
    Object.assign(progress, { stage: 'event threads', waitingFor: 'it was waiting for a resize of the event threads to finish' });
    try {
      swapped = await abortable(this.dispatcher.reload(init, {
        started: () => Object.assign(progress, { waitingFor: 'the new event threads had not all loaded it (a register that never finishes?)' }),
        beforeSwap: () => {
          // The new event threads read the plugin's files from disk: had they changed since the
          // main thread staged them (a save during the reload), the threads would run other code
          // than the main thread reports. Refused, before the switch; the next reload takes them.
          for (const a of attempts) {
            if (a.record.source.kind === 'managed' && hashSource(a.record.source).hash !== a.hash.hash) {
              throw new Error(`plugin '${a.record.name}': its files changed while the reload loaded them; reload again`);
            }
          }
          // So would a plugin this reload leaves as it is, saved since it was loaded.
          this.checkLoadedSources(new Set(attempts.map((a) => a.record.name)));
          Object.assign(progress, { stage: 'stop hook', waitingFor: "the running version's onStop hooks had not finished" });
          return this.runHooks(attempts, 'onStop', 'stop hook', warnings);
        },
        swap: () => {
          progress.switched = true;
          this.commit(attempts);
        },
      }, progress.signal), progress.signal);
    } catch (err) {
      this.undo(attempts);
      if (isDeadline(err, progress)) throw err;
      if (err instanceof GsfError && err.code === 'GSF_ERR_SHUTTING_DOWN') throw gsfError('GSF_ERR_RELOAD_UNAVAILABLE', 'the server is stopping');
      // A worker's load failure names its plugin (PluginError's wording).
      const named = /plugin '([^']+)'/.exec(describeError(err))?.[1];
      const names = named !== undefined && oldFiles.has(named) ? [named] : attempts.map((a) => a.record.name);
      throw this.refused(names, 'event threads', err);
    }
    await this.startHooks(attempts, warnings, progress.deadlineAt);
    const outcome: ReloadOutcome = {
      reloaded: attempts.map((a, i) => ({
        name: a.record.name, kind: a.record.source.kind, previous: previous[i]!, version: a.record.version, hash: a.record.hash,
        loaded_at: a.record.loadedAt.toISOString(), reloads: a.record.reloads,
      })),
      unchanged,
      duration_ms: ms(started),
      load_ms: Math.round(swapped.loadMs * 10) / 10,
      warnings,
    };
    const what = outcome.reloaded.map((r) => `'${r.name}' ${r.previous.version} -> ${r.version} (${r.hash.slice(0, 12)})`).join(', ');
    thread.log.info(`plugin reload: ${what} serving after ${outcome.duration_ms} ms`, { load_ms: outcome.load_ms, warnings });
    swapped.drained.then((drainMs) => {
      thread.log.vlog(1, `plugin reload: the old event threads finished what they held and ended after ${Math.round(drainMs)} ms`);
      for (const file of oldFiles.values()) {
        // A native copy's last events ended: what gsf held for it is released, then its on_unload runs.
        if (isNativeLibrary(file)) retireNativeCopy(file, sessionOps(thread.runtime), thread.log, applyInitEffects);
        removeCopy(file);
      }
    }, (err: unknown) => thread.log.error(`plugin reload: ending the old event threads failed: ${describeError(err)}`));
    return outcome;
  }

  /** Stages every plugin of the reload on the main thread; on any failure undoes them all and throws. */
  private async stage(attempts: Attempt[], progress: ReloadProgress): Promise<void> {
    const { thread } = this;
    const { signal } = progress;
    const owners = stagingOwners(thread, new Set(attempts.map((a) => a.record.name)));
    for (const a of attempts) {
      const { record } = a;
      Object.assign(progress, { stage: 'register', waitingFor: `plugin '${record.name}' had not finished loading and registering on the main thread` });
      try {
        if (a.hash.objectsHash !== record.objectsHash) {
          throw new PluginError(record.name, 'objects', new Error('its object declarations (objects/*.json) changed, and they '
            + 'take effect at start only: restart the server to apply them'), { code: 'GSF_ERR_OBJECT_SCHEMA' });
        }
        if (record.source.kind === 'managed') {
          a.saved = dropModules(record.source);
          a.staged = await abortable(stagePlugin(thread, record.name, owners, () => importPlugin(record.source.file)), signal);
        } else {
          const copy = a.copy = await abortable(copyLibrary(record.source.file, record.name), signal);
          // The hash of what is loaded, should the file have changed since it was first read.
          a.hash = hashSource(record.source, copy);
          this.preloadNative(copy, record.name);
          a.loaded = true;
          a.staged = await abortable(stagePlugin(thread, record.name, owners, (rt) => nativePluginDefinition(copy, rt)), signal);
        }
      } catch (err) {
        this.undo(attempts);
        if (isDeadline(err, progress)) throw err;
        throw this.refused([record.name], stageOf(err), err);
      }
    }
    const problem = checkStaged(thread, attempts.map((a) => a.staged!), owners, this.options.counterService);
    if (problem !== null) {
      this.undo(attempts);
      throw this.refused([problem.plugin], 'register', problem.error);
    }
  }

  /** Loads a native plugin's fresh copy here first: its init runs once, and workers find it loaded. */
  private preloadNative(copy: string, name: string): void {
    const { runtime: rt } = this.thread;
    let info;
    try {
      info = native.pluginLoad(copy, name);
    } catch (err) {
      const e = err as Error & { effects?: unknown[] };
      if (Array.isArray(e.effects)) applyInitEffects(e.effects, sessionOps(rt), rt.log);
      throw new GsfError('GSF_ERR_PLUGIN_LOAD', [name, e.message], { cause: err });
    }
    applyInitEffects(info.effects, sessionOps(rt), rt.log);
  }

  /** The switch on the main thread (synchronous; see SwapHooks.swap). */
  private commit(attempts: Attempt[]): void {
    const { thread } = this;
    const order = [...this.records.keys()];
    for (const a of attempts) {
      const { record } = a;
      const staged = a.staged!;
      const before = currentDeclarations(thread, record.name, record.version);
      for (const id of record.timers) native.timerCancel(id);
      // The old native copy's timers (timer_start) end at the switch, with their user data.
      if (record.source.kind !== 'managed') endNativeCopy(record.loadFile);
      commitStaged(thread, staged, order);
      record.timers = [];
      for (const t of staged.declarations.timers) {
        try {
          record.timers.push(thread.runtime.addTimer(t.delayMs, t.intervalMs, t.event, t.payload, t.name));
        } catch (err) {
          thread.log.error(`plugin reload: timer '${t.event}' of plugin '${record.name}' not started: ${describeError(err)}`);
        }
      }
      const loaded = thread.plugins.find((p) => p.name === record.name);
      if (loaded !== undefined) loaded.version = staged.version;
      Object.assign(record, {
        version: staged.version, hash: a.hash.hash, objectsHash: a.hash.objectsHash, loadFile: a.copy ?? record.loadFile,
        loadedAt: new Date(), reloads: record.reloads + 1,
      });
      announcePluginSwap({ plugin: record.name, before, after: currentDeclarations(thread, record.name, record.version) }, thread.log);
    }
    declareNativeTargets(thread.runtime);
    this.options.publishFlags();
  }

  /** Runs the reloaded plugins' start or stop hooks now in the declarations; failures become warnings. */
  private async runHooks(attempts: Attempt[], list: 'onStart' | 'onStop', stage: string, warnings: string[]): Promise<void> {
    const names = new Set(attempts.map((a) => a.record.name));
    for (const { plugin, fn } of this.thread.declarations[list].filter((h) => names.has(h.plugin))) {
      try {
        await fn();
      } catch (err) {
        const failure = new PluginError(plugin, stage, err);
        this.thread.log.error(`${failure.code}: ${failure.message}`);
        warnings.push(failure.message);
      }
    }
  }

  /** Takes back what staging did: the old modules return to the cache, copies are deleted. */
  private undo(attempts: Attempt[]): void {
    const { thread } = this;
    for (const a of attempts) {
      if (a.saved !== undefined) restoreModules(a.record.source, a.saved);
      // A native copy whose init ran never serves: what it started and registered is released
      // and its on_unload runs, as for a copy a reload retires.
      if (a.copy !== undefined && a.loaded === true) retireNativeCopy(a.copy, sessionOps(thread.runtime), thread.log, applyInitEffects);
      if (a.copy !== undefined) removeCopy(a.copy);
      a.saved = undefined;
      a.copy = undefined;
      a.staged = undefined;
      a.loaded = undefined;
    }
  }

  /** The refusal of a reload: logged, and answered 422 naming the plugin, the stage and the cause. */
  private refused(plugins: string[], stage: string, err: unknown): GsfError {
    const cause = err instanceof GsfError ? err.code : undefined;
    const error = new GsfError('GSF_ERR_RELOAD_FAILED', [plugins.map((p) => `plugin '${p}'`).join(', '), describeError(err)], {
      cause: err, details: { plugins, stage, ...(cause !== undefined ? { cause } : {}) },
    });
    this.thread.log.error(`${error.code}: ${error.message}`);
    return error;
  }
}

/** Where a staging failure happened, for the answer: loading the code, or registering it. */
function stageOf(err: unknown): string {
  if (err instanceof PluginError) return err.stage === 'load' ? 'load' : err.stage;
  if (err instanceof GsfError) return err.code === 'GSF_ERR_PLUGIN_LOAD' || err.code === 'GSF_ERR_PLUGIN_EXPORT' ? 'load' : 'register';
  return 'register';
}
