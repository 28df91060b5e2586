/** A deterministic CPU-bound function; the benchmarks calibrate `iterations` to ~50 µs. */
let sink = 0;

export function cpuWork(iterations: number): number {
  let x = 0x9e3779b9;
  for (let i = 0; i < iterations; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
  }
  sink ^= x;
  return sink;
}

/**
 * Iterations that take about `micros` µs on this machine. The loop is warmed up first, and each
 * size is timed several times, keeping the fastest: a busy machine's preemptions only lengthen a
 * timing, so the fastest is the closest to the work itself.
 */
export function calibrate(micros: number): number {
  for (let i = 0; i < 2000; i++) cpuWork(1000); // let the JIT optimize the loop
  let iterations = 1000;
  for (;;) {
    let best = Infinity;
    for (let trial = 0; trial < 7; trial++) {
      const start = performance.now();
      for (let i = 0; i < 50; i++) cpuWork(iterations);
      best = Math.min(best, ((performance.now() - start) * 1000) / 50);
    }
    if (best >= micros / 4) return Math.round((iterations * micros) / best);
    iterations *= 4;
  }
}
