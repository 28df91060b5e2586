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
  describe(name: string): string;
}

interface Callable {
  description: string;
  fn: CounterCallback;
}

export class CounterRegistry {
  private readonly callables = new Map<string, Map<string, Callable>>();
  private readonly providers = new Map<string, CategoryProvider>();

  /** Registers a counter computed on read; a second registration of the same counter throws. */
  registerCallable(category: string, name: string, description: string, fn: CounterCallback): void {
    if (typeof fn !== 'function') throw gsfError('GSF_ERR_BAD_ARGUMENT', `counter ${category}/${name}: callback must be a function`);
    const names = this.callables.get(category) ?? new Map<string, Callable>();
    if (names.has(name) || this.providers.has(category)) throw gsfError('GSF_ERR_BAD_ARGUMENT', `counter '${name}' of '${category}' is already registered`);
    names.set(name, { description, fn });
    this.callables.set(category, names);
  }

  /** Provides a whole category (built-in figures). */
  provide(category: string, provider: CategoryProvider): void {
    this.providers.set(category, provider);
  }

  /** Forgets every callable counter and provided category (a stopping server). */
  clear(): void {
    this.callables.clear();
    this.providers.clear();
  }

  /** All categories, sorted. */
  categories(): string[] {
    const all = new Set([...native.counterCategories(), ...this.callables.keys(), ...this.providers.keys()]);
    return [...all].sort();
  }

  /** Counter names of a category, sorted, or null when there is no such category. */
  list(category: string): string[] | null {
    const provider = this.providers.get(category);
    if (provider) return provider.list();
    const stored = native.counterList(category);
    const callable = this.callables.get(category);
    if (stored === null && !callable) return null;
    return [...new Set([...(stored ?? []), ...(callable?.keys() ?? [])])].sort();
  }

  /** Whether the counter exists. */
  has(category: string, name: string): boolean {
    return this.read(category, name) !== null;
  }

  /** The value (undefined: a callable with no value), or null when there is no such counter. */
  read(category: string, name: string): CounterReading | null {
    const provider = this.providers.get(category);
    if (provider) return provider.read(name);
    const callable = this.callables.get(category)?.get(name);
    if (callable) {
      const v = callable.fn(category, name);
      return typeof v === 'number' && !Number.isFinite(v) ? undefined : v;
    }
    return native.counterValue(category, name);
  }

  /** The description ('' when none), or null when there is no such counter. */
  describe(category: string, name: string): string | null {
    const provider = this.providers.get(category);
    if (provider) return provider.read(name) === null ? null : provider.describe(name);
    const callable = this.callables.get(category)?.get(name);
    if (callable) return callable.description;
    const stored = native.counterGet(category, name);
    return stored === null ? null : stored.description;
  }
}

/** The process's counter registry (one gsf server per process). */
export const counterRegistry = new CounterRegistry();
