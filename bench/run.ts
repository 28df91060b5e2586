/** `npm run bench [-- NAME]`: runs one benchmark or all of them. */
const BENCHES: Record<string, () => Promise<{ run(): Promise<void> }>> = {
  events: () => import('./events.ts'),
  auth: () => import('./auth.ts'),
  api: () => import('./api.ts'),
  sessions: () => import('./sessions.ts'),
  native: () => import('./native.ts'),
};

export async function runBenchmarks(args: string[]): Promise<void> {
  const names = args.length > 0 ? args : Object.keys(BENCHES);
  for (const name of names) {
    const load = BENCHES[name];
    if (!load) throw new Error(`unknown benchmark '${name}' (known: ${Object.keys(BENCHES).join(', ')})`);
    await (await load()).run();
  }
}
