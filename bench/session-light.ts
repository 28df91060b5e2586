/**
 * Light load (`npm run bench -- sessions --light`): what a mostly quiet server costs. Clients
 * send at fixed, low rates, each on its own timer; the server process's CPU time (every thread,
 * from /proc/PID/stat) is read over an ~8 s window, for gsf and for the raw uWebSockets.js echo
 * in the same run, one after the other at each rate; and the idle CPU with no traffic.
 */
import { processCpuMs } from './processes.ts';
import { FRAMES, load, type Load } from './session-load.ts';
import type { Server } from './session-servers.ts';

/** Each rate as players make it: so many clients, each sending every so many ms. */
export const LIGHT_RATES = [
  { perSec: 200, clients: 1, everyMs: 5 },
  { perSec: 2_000, clients: 20, everyMs: 10 },
  { perSec: 20_000, clients: 200, everyMs: 10 },
] as const;
const WINDOW_MS = Number(process.env.GSF_BENCH_LIGHT_WINDOW_MS ?? 8000);
const IDLE_MS = Number(process.env.GSF_BENCH_LIGHT_IDLE_MS ?? 5000);
const WARMUP_MS = Number(process.env.GSF_BENCH_LIGHT_WARMUP_MS ?? 3000);
const SETTLE_MS = Number(process.env.GSF_BENCH_LIGHT_SETTLE_MS ?? 12000);

export interface LightFigures {
  rate: number;
  /** Percent of one core over the window. */
  cpuPercent: number;
  cpuUsPerMsg: number;
  load: Load;
}

export interface LightResult {
  idleCpuPercent: number;
  rates: LightFigures[];
}

/** CPU of the server over `ms` with no traffic, in percent of one core. */
async function idleCpu(server: Server, ms: number): Promise<number> {
  const before = processCpuMs(server.child.pid!);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  return ((processCpuMs(server.child.pid!) - before) / (performance.now() - t0)) * 100;
}

/** One rate against one server: CPU read at the edges of the load generator's measured window. */
async function atRate(server: Server, rate: (typeof LIGHT_RATES)[number]): Promise<LightFigures> {
  let cpuStart = 0;
  let cpuEnd = 0;
  let t0 = 0;
  let t1 = 0;
  const result = await load(server.port, {
    mode: 'paced', frames: FRAMES.json, threads: 1, connections: rate.clients, intervalMs: rate.everyMs, durationMs: WINDOW_MS,
    onWindow: (edge) => {
      if (edge === 'start') {
        cpuStart = processCpuMs(server.child.pid!);
        t0 = performance.now();
      } else {
        cpuEnd = processCpuMs(server.child.pid!);
        t1 = performance.now();
      }
    },
  });
  const cpuMs = cpuEnd - cpuStart;
  return { rate: rate.perSec, cpuPercent: (cpuMs / (t1 - t0)) * 100, cpuUsPerMsg: (cpuMs * 1000) / Math.max(1, result.sent), load: result };
}

/** The light-load figures of each server, measured interleaved: idle, then each rate in turn. */
export async function lightLoad(servers: Server[]): Promise<Map<string, LightResult>> {
  const out = new Map<string, LightResult>(servers.map((s) => [s.name, { idleCpuPercent: NaN, rates: [] }]));
  // A warm-up at the middle rate (the JIT compiles the message path), then a settle long enough
  // for V8's memory reducer, which runs a few full collections some seconds after allocation
  // stops: idle is what a quiet server costs for hours, not the minute after its last message.
  for (const s of servers) await load(s.port, { mode: 'paced', threads: 1, connections: 20, intervalMs: 10, durationMs: WARMUP_MS });
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  for (const s of servers) out.get(s.name)!.idleCpuPercent = await idleCpu(s, IDLE_MS);
  for (const rate of LIGHT_RATES) {
    for (const s of servers) out.get(s.name)!.rates.push(await atRate(s, rate));
  }
  return out;
}

/** The JSON figures of one server's light-load result. */
export function lightJson(r: LightResult): Record<string, unknown> {
  return {
    idle_cpu_percent: +r.idleCpuPercent.toFixed(2),
    rates: r.rates.map((f) => ({
      msgs_per_sec: f.rate, cpu_percent: +f.cpuPercent.toFixed(2), cpu_us_per_msg: +f.cpuUsPerMsg.toFixed(1),
      p50_ms: +f.load.p50Ms.toFixed(3), p99_ms: +f.load.p99Ms.toFixed(3), sent: f.load.sent,
      replies: Math.round(f.load.perSec * f.load.seconds), errors: f.load.errors + f.load.others,
    })),
  };
}
