/**
 * Every counter the API service can show: the native store (plain counters, written from any
 * thread) plus, on the main thread, callable counters (computed on read) and whole categories
 * provided by a feature (the profiler's, the process and OS figures).
 */
import { native } from '../native.ts';
import { gsfError } from '../errors.ts';

/** A counter's value: a number, a string for a few built-ins (`os/type`), or none (HTTP 204). */
export type CounterReading = number | string | undefined;

/** A callable counter's callback (SPEC 4.4): receives (category, name), returns the value or undefined. */
export type CounterCallback = (category: string, name: string) => CounterReading;

/** A category computed as a whole on read. */
export interface CategoryProvider {
  list(): string[];
  read(name: string): CounterReading | null;
  /** Every counter's value from one reading (a table built per read is then built once). */
  values?(): Map<string, CounterReading>;
  describe(name: string): string;
}

/** See `CounterRegistry.stamp`. */
export interface LayoutStamp {
  readonly native: number;
  readonly local: number;
}

/**
 * What a callable counter's callback returned, as a reading: a finite number or a string as it
 * is, a BigInt (a 64-bit count from a database driver) as the nearest number, and anything else
 * (NaN, Infinity, null, an object) as no value.
 */
function callableValue(v: unknown): CounterReading {
  // A promise (an async callback) is no value; its rejection must not end the process.
  if (v instanceof Promise) {
    v.catch(() => undefined);
    return undefined;
  }
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

interface Callable {
  description: string;
  fn: CounterCallback;
}

/**
 * The categories whose values gsf computes (counters/builtins.ts provides them when the API
 * service starts, after plugins have registered): no callable counter may be registered in one.
 */
export const PROVIDED_CATEGORIES: ReadonlySet<string> = new Set([
  'process', 'os', 'event', 'event/performance/queue',
  'event/profiling/summary', 'event/profiling/all', 'event/profiling/reset', 'event/profiling/outstanding',
]);

export class CounterRegistry {
  private readonly callables = new Map<string, Map<string, Callable>>();
  private readonly providers = new Map<string, CategoryProvider>();
  /** Bumped when callable counters or provided categories change. */
  private localGeneration = 0;
  /** The native store's layout generation, read without a call. */
  private layoutView: Int32Array | null = null;

  /** Registers a counter computed on read; a second registration of the same counter throws. */
  registerCallable(category: string, name: string, description: string, fn: CounterCallback): void {
    if (typeof fn !== 'function') throw gsfError('GSF_ERR_BAD_ARGUMENT', `counter ${category}/${name}: callback must be a function`);
    const names = this.callables.get(category) ?? new Map<string, Callable>();
    if (this.providers.has(category) || PROVIDED_CATEGORIES.has(category)) {
      throw gsfError('GSF_ERR_BAD_ARGUMENT', `counter '${name}' of '${category}': '${category}' is a built-in category, whose values gsf computes; register callable counters in a category of your own`);
    }
    if (names.has(name)) throw gsfError('GSF_ERR_BAD_ARGUMENT', `counter '${name}' of '${category}' is already registered`);
    names.set(name, { description, fn });
    this.callables.set(category, names);
    this.localGeneration++;
  }

  /** Whether a callable counter of that name is registered. */
  hasCallable(category: string, name: string): boolean {
    return this.callables.get(category)?.has(name) ?? false;
  }

  /** Forgets one callable counter (its plugin was reloaded); false if there was none. */
  unregisterCallable(category: string, name: string): boolean {
    const names = this.callables.get(category);
    if (!names?.delete(name)) return false;
    if (names.size === 0) this.callables.delete(category);
    this.localGeneration++;
    return true;
  }

  /** Provides a whole category (built-in figures). */
  provide(category: string, provider: CategoryProvider): void {
    // Plugins register before the API service provides these: the list says which they may not use.
    if (!PROVIDED_CATEGORIES.has(category)) throw new Error(`counter category '${category}' is provided but not in PROVIDED_CATEGORIES`);
    this.providers.set(category, provider);
    this.localGeneration++;
  }

  /** Forgets every callable counter and provided category (a stopping server). */
  clear(): void {
    this.callables.clear();
    this.providers.clear();
    this.localGeneration++;
  }

  /**
   * Where the set of categories stands now (here and in the native store), so callers can cache
   * how a path splits into category and counter and check the cache with `isCurrent`.
   */
  stamp(): LayoutStamp {
    return { native: this.nativeGeneration(), local: this.localGeneration };
  }

  isCurrent(stamp: LayoutStamp): boolean {
    return stamp.local === this.localGeneration && stamp.native === this.nativeGeneration();
  }

  private nativeGeneration(): number {
    this.layoutView ??= new Int32Array(native.counterLayoutView());
    return Atomics.load(this.layoutView, 0);
  }

  /** All categories, sorted. */
  categories(): string[] {
    const all = new Set([...native.counterCategories(), ...this.callables.keys(), ...this.providers.keys()]);
    return [...all].sort();
  }

  /** Counter names of a category, sorted, or null when there is no such category. */
  list(category: string): string[] | null {
    return this.names(category, this.providers.get(category)?.list() ?? null);
  }

  /** `list` with the provided names already read (null: no provided category). */
  private names(category: string, provided: readonly string[] | null): string[] | null {
    // A built-in category (provided) may also hold counters plugins made in it: both are listed.
    const stored = native.counterList(category);
    const callable = this.callables.get(category);
    if (provided === null && stored === null && !callable) return null;
    return [...new Set([...(provided ?? []), ...(stored ?? []), ...(callable?.keys() ?? [])])].sort();
  }

  /**
   * Told when a counter's callback threw while a whole category was read (`values`): that
   * counter is left out of the reading, the others are read.
   */
  onReadError: ((category: string, name: string, err: unknown) => void) | null = null;

  /**
   * Every counter of a category with its value, or null when there is no such category. A
   * built-in table is read once, not once per counter; a counter whose callback throws is left
   * out (and `onReadError` told), so one failing plugin callback does not hide the rest.
   */
  values(category: string): Map<string, CounterReading> | null {
    return this.reading(category)?.values ?? null;
  }

  /**
   * `list` and `values` from one reading of the category: a built-in table that changes between
   * two readings (the running events) never lists one set of counters with another's values.
   */
  reading(category: string): { names: string[]; values: Map<string, CounterReading> } | null {
    const provider = this.providers.get(category);
    const provided = provider?.values?.() ?? null;
    const names = this.names(category, provided !== null ? [...provided.keys()] : provider?.list() ?? null);
    if (names === null) return null;
    const out = new Map<string, CounterReading>();
    for (const name of names) {
      if (provided !== null && provided.has(name)) {
        out.set(name, provided.get(name));
        continue;
      }
      try {
        const v = this.read(category, name);
        if (v !== null) out.set(name, v);
      } catch (err) {
        this.onReadError?.(category, name, err);
      }
    }
    return { names, values: out };
  }

  /**
   * Every counter of a category but those its provider gives (a built-in category's own), with
   * its value: what plugins made in a built-in category, or the whole of any other category.
   * A counter whose callback throws is left out, as in `values`.
   */
  valuesBesideProvided(category: string): Map<string, CounterReading> {
    const provider = this.providers.get(category);
    if (!provider) return this.values(category) ?? new Map();
    const out = new Map<string, CounterReading>();
    const names = this.names(category, []) ?? [];
    if (names.length === 0) return out;
    // The provider's table is built once, not once per name.
    const provided = new Set(provider.values?.().keys() ?? provider.list());
    for (const name of names) {
      if (provided.has(name)) continue; // the built-in one answers (see read)
      try {
        const callable = this.callables.get(category)?.get(name);
        const v = callable ? callableValue(callable.fn(category, name)) : native.counterValue(category, name);
        if (v !== null) out.set(name, v);
      } catch (err) {
        this.onReadError?.(category, name, err);
      }
    }
    return out;
  }

  /** Whether the category exists (stored, callable or provided). */
  hasCategory(category: string): boolean {
    return this.providers.has(category) || this.callables.has(category) || native.counterList(category) !== null;
  }

  /** Whether the counter exists. */
  has(category: string, name: string): boolean {
    return this.read(category, name) !== null;
  }

  /** The value (undefined: a callable with no value), or null when there is no such counter. */
  read(category: string, name: string): CounterReading | null {
    const provider = this.providers.get(category);
    if (provider) {
      // undefined: a built-in counter with no value now; null: not a built-in one.
      const provided = provider.read(name);
      if (provided !== null) return provided;
    }
    const callable = this.callables.get(category)?.get(name);
    if (callable) return callableValue(callable.fn(category, name));
    return native.counterValue(category, name);
  }

  /**
   * A function that reads one counter again and again (null when there is no such counter):
   * a polled counter skips the lookups by name. It answers null once the counter is gone; a
   * category added or removed since is detected with `stamp`/`isCurrent`.
   */
  reader(category: string, name: string): (() => CounterReading | null) | null {
    const provider = this.providers.get(category);
    if (provider && provider.read(name) !== null) return () => provider.read(name);
    const callable = this.callables.get(category)?.get(name);
    if (callable) return () => this.read(category, name);
    const handle = native.counterHandle(category, name);
    return handle < 0 ? null : () => native.counterValueAt(handle);
  }

  /** The description ('' when none), or null when there is no such counter. */
  describe(category: string, name: string): string | null {
    const provider = this.providers.get(category);
    if (provider && provider.read(name) !== null) return provider.describe(name);
    const callable = this.callables.get(category)?.get(name);
    if (callable) return callable.description;
    const stored = native.counterGet(category, name);
    return stored === null ? null : stored.description;
  }
}

/** The process's counter registry (one gsf server per process). */
export const counterRegistry = new CounterRegistry();
