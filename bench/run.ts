/** `npm run bench [-- NAME… [--FLAG…]]`: runs the named benchmarks (all without a name); flags go to each. */
import { loadModule } from '../src/load-module.ts';

type Benchmark = { run(flags: string[]): Promise<void> };
/** A benchmark's module, loaded as gsf was (the `gsf` command runs it as CommonJS). */
const bench = (file: string): Promise<Benchmark> => loadModule<Benchmark>(import.meta.url, file);

const BENCHES: Record<string, () => Promise<Benchmark>> = {
  events: () => bench('./events.ts'),
  auth: () => bench('./auth.ts'),
  api: () => bench('./api.ts'),
  sessions: () => bench('./sessions.ts'),
  objects: () => bench('./objects.ts'),
  native: () => bench('./native.ts'),
  io: () => bench('./io.ts'),
  'cs-api': () => bench('./cs-api.ts'),
  reload: () => bench('./reload.ts'),
  'reload-memory': () => bench('./reload-memory.ts'),
  cluster: () => bench('./cluster.ts'),
};

export const BENCHMARK_NAMES = Object.keys(BENCHES);

/** The names of `args` that are no benchmark (checked before any runs): a usage mistake, exit 2. */
export function unknownBenchmarks(args: string[]): string[] {
  return args.filter((a) => !a.startsWith('--') && !Object.hasOwn(BENCHES, a));
}

export async function runBenchmarks(args: string[]): Promise<void> {
  const flags = args.filter((a) => a.startsWith('--'));
  const named = args.filter((a) => !a.startsWith('--'));
  const names = named.length > 0 ? named : BENCHMARK_NAMES;
  for (const name of names) {
    const load = BENCHES[name];
    if (!load) throw new Error(`unknown benchmark '${name}' (known: ${BENCHMARK_NAMES.join(', ')})`);
    await (await load()).run(flags);
  }
}
