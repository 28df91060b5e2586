/** Handlers the benchmarks run: a trivial one and a ~50 µs CPU-bound one. */
import { definePlugin } from '../../../src/index.ts';
import { cpuWork } from '../../cpu-work.ts';

export default definePlugin({
  name: 'bench',
  version: '0.0.1',
  register(api) {
    api.event('bench.noop', () => {});
    api.event<number>('bench.cpu', (iterations) => {
      cpuWork(iterations);
    });
  },
});
