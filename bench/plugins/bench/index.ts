/**
 * Handlers the benchmarks run: a trivial one, a ~50 µs CPU-bound one, and a chain (each event
 * invokes the next event of its own tag from its event thread, until its count runs out); and
 * `bench/reads`, a counter whose value changes on every read (bench/api).
 */
import { definePlugin } from '../../../src/index.ts';
import { cpuWork } from '../../cpu-work.ts';

let reads = 0;

export default definePlugin({
  name: 'bench',
  version: '0.0.1',
  register(api) {
    api.event('bench.noop', () => {});
    api.event<number>('bench.cpu', (iterations) => {
      cpuWork(iterations);
    });
    api.event<number>('bench.chain', (left, ev) => {
      if (left > 1) api.invoke('bench.chain', left - 1, { tag: ev.tag });
    });
    // I/O-bound: awaits a timer of `ms` (a database or platform call), then is done.
    api.event<number>('bench.wait', async (ms) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
    });
    api.counters.registerCallable('bench', 'reads', 'Read count: a new value on every read', () => ++reads);
  },
});
