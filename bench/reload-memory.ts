/**
 * bench/reload-memory: resident memory of a `gsf start` process over many forced reloads with
 * no traffic, to tell a leak (RSS that keeps growing) from a level the heaps settle at. The
 * server runs the repository's example plugins; the managed ones (example, arena) are reloaded
 * in turn with `POST /v1/plugins/{name}/reload?force=true`, RSS read from /proc after each.
 * Then a native one (native-echo), whose every reload keeps a copy of the library mapped for
 * good (README, Hot reload: native plugins), to show what one such reload costs.
 *   GSF_BENCH_RELOADS (150): managed reloads; GSF_BENCH_NATIVE_RELOADS (30): native ones.
 * Goal: over the last half of the managed reloads RSS grows by less than a third of what it grew
 * over the first half (it levels off; a leak grows by the same amount per reload throughout).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { printReport, type BenchRow } from './report.ts';
import { freePort, rssKb, startProcess, stopProcess } from './processes.ts';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const RELOADS = Number(process.env.GSF_BENCH_RELOADS ?? 150);
const NATIVE_RELOADS = Number(process.env.GSF_BENCH_NATIVE_RELOADS ?? 30);
const MANAGED = ['example', 'arena'];
const NATIVE = 'native-echo';

async function forceReload(port: number, plugin: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/plugins/${plugin}/reload?force=true`, { method: 'POST' });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`reload of ${plugin}: ${res.status} ${body}`);
}

function threadCount(pid: number): number {
  return Number(/Threads:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
}

let baseThreads = 0;

/** RSS in MB once the old event threads of the last reload have ended (the process has its threads of the start again, or 10 s passed). */
async function settledRssMb(pid: number): Promise<number> {
  const until = Date.now() + 10_000;
  do await new Promise((r) => setTimeout(r, 100));
  while (threadCount(pid) > baseThreads && Date.now() < until);
  return rssKb(pid) / 1024;
}

export async function run(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-bench-reload-memory-'));
  const manifest = path.join(dir, 'MANIFEST.json');
  const repo = JSON.parse(fs.readFileSync(path.join(root, 'MANIFEST.json'), 'utf8')) as { components: Array<{ name: string; arguments: Record<string, unknown> }>; plugins: string[] };
  for (const c of repo.components) {
    if (c.name === 'ApiService') c.arguments.api_service_port = await freePort();
    if (c.name === 'SessionService') Object.assign(c.arguments, { websocket_address: '127.0.0.1', websocket_port: 0 });
  }
  repo.plugins = repo.plugins.map((p) => path.join(root, 'plugins', p));
  fs.writeFileSync(manifest, JSON.stringify(repo));
  const { child, port } = await startProcess([path.join(root, 'bin', 'gsf.mjs'), 'start', '--manifest', manifest], /listening api=[^:\s]+:(\d+)/);
  const pid = child.pid!;
  const samples: Array<{ reloads: number; rss_mb: number }> = [];
  try {
    await new Promise((r) => setTimeout(r, 1000));
    baseThreads = threadCount(pid);
    samples.push({ reloads: 0, rss_mb: await settledRssMb(pid) });
    const started = performance.now();
    for (let i = 1; i <= RELOADS; i++) {
      await forceReload(port, MANAGED[i % MANAGED.length]!);
      if (i % 10 === 0 || i === RELOADS) {
        samples.push({ reloads: i, rss_mb: await settledRssMb(pid) });
        process.stderr.write(`reload-memory: ${i} managed reloads, RSS ${samples.at(-1)!.rss_mb.toFixed(1)} MB, ${threadCount(pid)} threads (${baseThreads} at start)\n`);
      }
    }
    const managedMs = performance.now() - started;
    const idle = await new Promise<number>((r) => setTimeout(() => r(rssKb(pid) / 1024), 5000));
    const beforeNative = await settledRssMb(pid);
    for (let i = 1; i <= NATIVE_RELOADS; i++) await forceReload(port, NATIVE);
    const afterNative = await settledRssMb(pid);

    const first = samples[0]!.rss_mb;
    const mid = samples.find((s) => s.reloads >= RELOADS / 2)!.rss_mb;
    const last = samples.at(-1)!.rss_mb;
    const rows: BenchRow[] = [
      { label: 'RSS at start', value: first, unit: 'MB' },
      { label: `RSS after ${Math.round(RELOADS / 2)} managed reloads`, value: mid, unit: 'MB' },
      { label: `RSS after ${RELOADS} managed reloads`, value: last, unit: 'MB' },
      { label: 'RSS 5 s later, idle', value: idle, unit: 'MB' },
      { label: 'growth, first half', value: mid - first, unit: 'MB' },
      { label: 'growth, second half', value: last - mid, unit: 'MB' },
      { label: 'time per managed reload', value: managedMs / RELOADS, unit: 'ms' },
      { label: `RSS per native reload (${NATIVE_RELOADS})`, value: ((afterNative - beforeNative) * 1024) / NATIVE_RELOADS, unit: 'kB' },
    ];
    const levels = last - mid < Math.max(mid - first, 1) / 3;
    printReport('reload-memory', rows, { reloads: RELOADS, native_reloads: NATIVE_RELOADS, samples, idle_mb: idle,
      native_before_mb: beforeNative, native_after_mb: afterNative, goal: { levels_off: levels } });
  } finally {
    await stopProcess(child);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await run();
