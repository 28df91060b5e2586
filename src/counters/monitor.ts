/**
 * Counter threshold monitoring (SPEC 6.3, 8): every `counter_monitoring_interval_in_sec`,
 * each monitored counter above its threshold writes the SPEC warning line.
 */
import { gsfError } from '../errors.ts';
import type { Logger } from '../log/logger.ts';
import type { CounterRegistry } from './registry.ts';

interface Monitor {
  category: string;
  name: string;
  threshold: number;
  /** Built-in monitors wait quietly for counters whose feature has not landed. */
  builtin: boolean;
}

export class CounterMonitor {
  private readonly monitors: Monitor[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly registry: CounterRegistry, private readonly log: Logger, private readonly intervalSec: number) {}

  /** Monitors a registered counter; an unknown counter or a bad threshold throws. */
  add(category: string, name: string, threshold: number, builtin = false): void {
    if (typeof threshold !== 'number' || !Number.isFinite(threshold)) {
      throw gsfError('GSF_ERR_BAD_ARGUMENT', `monitor threshold must be a finite number, got ${String(threshold)}`);
    }
    if (!builtin && !this.registry.has(category, name)) throw gsfError('GSF_ERR_COUNTER_UNKNOWN', name, category);
    const existing = this.monitors.find((m) => m.category === category && m.name === name);
    if (existing) existing.threshold = threshold;
    else this.monitors.push({ category, name, threshold, builtin });
  }

  /** Stops monitoring a counter (its plugin was reloaded without the monitor). */
  remove(category: string, name: string): boolean {
    const i = this.monitors.findIndex((m) => m.category === category && m.name === name && !m.builtin);
    if (i >= 0) this.monitors.splice(i, 1);
    return i >= 0;
  }

  list(): Array<{ category: string; name: string; threshold: number }> {
    return this.monitors.map(({ category, name, threshold }) => ({ category, name, threshold }));
  }

  start(): void {
    this.timer = setInterval(() => this.check(), this.intervalSec * 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One check of every monitor. */
  check(): void {
    for (const m of this.monitors) {
      let value;
      try {
        value = this.registry.read(m.category, m.name);
      } catch (err) {
        this.log.error(`counter '${m.name}' of '${m.category}' could not be read: ${(err as Error).message}`);
        continue;
      }
      if (typeof value === 'number' && value > m.threshold) {
        this.log.warn(`The '${m.name} of ${m.category}' counter exceeded threshold: value=${value}, threshold=${m.threshold}`);
      }
    }
  }
}

let active: CounterMonitor | null = null;

/** Set by the API feature while the server runs, so plugins can add monitors at run time. */
export function setActiveMonitor(monitor: CounterMonitor | null): void {
  active = monitor;
}

/** The running server's monitor, or null before it starts. */
export function activeMonitor(): CounterMonitor | null {
  return active;
}
