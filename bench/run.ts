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

/** The options each benchmark takes (see its header): `--name=` takes a value, `--name` is a switch. */
const OPTIONS: Record<string, readonly string[]> = {
  events: ['--threads=', '--modes=', '--rounds='],
  sessions: ['--io-threads=', '--light', '--peak-only'],
};

/** The names of `args` that are no benchmark (checked before any runs): a usage mistake, exit 2. */
export function unknownBenchmarks(args: string[]): string[] {
  return args.filter((a) => !a.startsWith('--') && !Object.hasOwn(BENCHES, a));
}

/**
 * What is wrong with the options of `args` (checked before any runs: a mistyped option would
 * otherwise be ignored and the benchmark run with its defaults), or null: each must be one the
 * named benchmarks (all, when none is named) take, a value option with its value.
 */
export function optionProblem(args: string[]): string | null {
  const named = args.filter((a) => !a.startsWith('--'));
  const names = named.length > 0 ? named : BENCHMARK_NAMES;
  const taken = names.flatMap((n) => OPTIONS[n] ?? []);
  for (const arg of args.filter((a) => a.startsWith('--'))) {
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg : arg.slice(0, eq);
    if (taken.includes(`${name}=`)) {
      if (eq < 0 || eq === arg.length - 1) return `${name} needs a value (${name}=…)`;
    } else if (!taken.includes(name) || eq >= 0) {
      const known = taken.length > 0 ? `${names.join(', ')} take${names.length === 1 ? 's' : ''} ${taken.map((o) => (o.endsWith('=') ? `${o}…` : o)).join(', ')}` : `${names.join(', ')} take${names.length === 1 ? 's' : ''} none`;
      return `unknown option '${arg}' (${known})`;
    }
  }
  return null;
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
