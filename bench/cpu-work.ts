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

/** Iterations that take about `micros` µs on this machine. */
export function calibrate(micros: number): number {
  let iterations = 1000;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < 200; i++) cpuWork(iterations);
    const each = ((performance.now() - start) * 1000) / 200;
    if (each >= micros / 4) return Math.round((iterations * micros) / each);
    iterations *= 4;
  }
}
