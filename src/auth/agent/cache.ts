/**
 * The agent's verdict cache (positive platform answers per platform, player and token), the
 * sharing of identical in-flight checks, and the bound on concurrent platform requests.
 */
import { createHash } from 'node:crypto';

/** Short, non-reversible form of a token for logs and cache keys. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 12);
}

/** Time-limited entries with a size cap; the oldest entry goes first when full. */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(private readonly ttlMs: number, private readonly maxEntries: number, private readonly now = Date.now) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.expires <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(key);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expires: this.now() + this.ttlMs });
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Runs one call per key at a time; callers asking while it runs share its result. */
export class InFlight<V> {
  private readonly running = new Map<string, Promise<V>>();

  run(key: string, fn: () => Promise<V>): Promise<V> {
    const current = this.running.get(key);
    if (current) return current;
    const p = fn().finally(() => this.running.delete(key));
    this.running.set(key, p);
    return p;
  }
}

/** Thrown when more calls wait for a slot than allowed. */
export class BusyError extends Error {
  constructor(waiting: number) {
    super(`too many platform requests waiting (${waiting})`);
    this.name = 'BusyError';
  }
}

/** At most `max` calls run at once; up to `maxWaiting` more wait in order. */
export class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number, private readonly maxWaiting: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) {
      if (this.waiting.length >= this.maxWaiting) throw new BusyError(this.waiting.length);
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next(); // the slot passes straight on
      else this.active--;
    }
  }

  get inUse(): number {
    return this.active;
  }
}
