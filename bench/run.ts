/** `npm run bench [-- NAME… [--FLAG…]]`: runs the named benchmarks (all without a name); flags go to each. */
const BENCHES: Record<string, () => Promise<{ run(flags: string[]): Promise<void> }>> = {
  events: () => import('./events.ts'),
  auth: () => import('./auth.ts'),
  api: () => import('./api.ts'),
  sessions: () => import('./sessions.ts'),
  objects: () => import('./objects.ts'),
  native: () => import('./native.ts'),
  io: () => import('./io.ts'),
  'cs-api': () => import('./cs-api.ts'),
  reload: () => import('./reload.ts'),
  'reload-memory': () => import('./reload-memory.ts'),
  cluster: () => import('./cluster.ts'),
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
