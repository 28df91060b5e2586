/**
 * bench/sessions: client messages per second and round-trip latency through
 * session → network event → worker handler → reply, against baselines in the same run:
 * - a raw uWebSockets.js echo server (no decoding, no events, no threads);
 * - a `ws` server running the same handler inline (decode, handler, encode on one thread).
 * Each server is its own process (gsf as `gsf start`, the baselines from
 * bench/session-baselines.ts), all three up for the whole run and measured in interleaved
 * rounds (medians); the load generator (bench/ws-load-worker.ts) pipelines pre-encoded frames
 * over raw sockets from worker threads of this process and counts only replies of the expected
 * type. Frames: canonical JSON, JSON with the body first, and msgpack. Also: resident memory
 * per idle session, and the light-load figures of bench/session-light.ts.
 * `npm run bench -- sessions --light` runs the light-load part alone; `--io-threads=N` sets the
 * measured gsf's I/O threads; `--peak-only --io-threads=1,4` compares JSON peaks only.
 */
import os from 'node:os';
import { printReport, type BenchRow } from './report.ts';
import { processCpuMs, stopProcess } from './processes.ts';
import { CONNECTIONS, FRAMES, LOAD_THREADS, WINDOW, load, median, type FrameKind, type Load } from './session-load.ts';
import { baselineServer, gsfServer, type Server } from './session-servers.ts';
import { LIGHT_RATES, lightJson, lightLoad, type LightResult } from './session-light.ts';
import { idleSessions } from './session-idle-memory.ts';

const ROUNDS = Number(process.env.GSF_BENCH_ROUNDS ?? 3);
/** A rate every server sustains, for comparing their CPU cost per message. */
const FIXED_RATE = Number(process.env.GSF_BENCH_FIXED_RATE ?? 50_000);
/**
 * Event threads of the measured gsf: one per core the main thread leaves (the sizing the README
 * recommends); `GSF_BENCH_EVENT_THREADS` overrides it. The light-load part always uses one.
 */
const EVENT_THREADS = Number(process.env.GSF_BENCH_EVENT_THREADS ?? Math.max(1, os.availableParallelism() - 1));
const KINDS: FrameKind[] = [FRAMES.json, FRAMES['json-varied'], FRAMES.msgpack];

interface Measured {
  /** Median peak per frame kind. */
  peak: Record<FrameKind['name'], number>;
  /** Every round's peak per frame kind, in order. */
  peakRounds: Record<FrameKind['name'], number[]>;
  /**
   * The server's CPU per message at peak per frame kind (µs; median of the rounds): steadier
   * than throughput on a machine the load generator shares.
   */
  peakCpuUsPerMsg: Record<FrameKind['name'], number>;
  /** At half of its own JSON peak: the round with the median p99. */
  half: Load;
  /** At FIXED_RATE: the round with the median CPU per message, and that figure (µs). */
  fixed: Load;
  cpuUsPerMsg: number;
  /** `_error` and other unexpected frames over every load of the run. */
  errors: number;
}

const ms = (v: number): number => +v.toFixed(3);

/** The server's CPU per message sent in the load generator's measured window (µs). */
async function fixedRate(s: Server): Promise<{ load: Load; cpuUsPerMsg: number }> {
  let start = 0;
  let end = 0;
  const l = await load(s.port, {
    mode: 'rate', ratePerSec: FIXED_RATE,
    onWindow: (edge) => { if (edge === 'start') start = processCpuMs(s.child.pid!); else end = processCpuMs(s.child.pid!); },
  });
  return { load: l, cpuUsPerMsg: ((end - start) * 1000) / Math.max(1, l.sent) };
}

/** Peaks per frame kind, then round trips at half of each peak, then CPU at FIXED_RATE: servers interleaved in every round. */
async function measure(servers: Server[]): Promise<Map<string, Measured>> {
  const errors = new Map(servers.map((s) => [s.name, 0]));
  const counted = (s: Server, l: Load): Load => {
    errors.set(s.name, errors.get(s.name)! + l.errors + l.others);
    return l;
  };
  for (const kind of KINDS) {
    for (const s of servers) counted(s, await load(s.port, { mode: 'peak', frames: kind, durationMs: 1000 })); // warm-up
  }
  const peaks = new Map(servers.map((s) => [s.name, new Map(KINDS.map((k) => [k.name, [] as number[]]))]));
  const peakCpu = new Map(servers.map((s) => [s.name, new Map(KINDS.map((k) => [k.name, [] as number[]]))]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const kind of KINDS) {
      for (const s of servers) {
        let cpuStart = 0;
        let cpuEnd = 0;
        const l = counted(s, await load(s.port, {
          mode: 'peak', frames: kind,
          onWindow: (edge) => { if (edge === 'start') cpuStart = processCpuMs(s.child.pid!); else cpuEnd = processCpuMs(s.child.pid!); },
        }));
        peaks.get(s.name)!.get(kind.name)!.push(l.perSec);
        peakCpu.get(s.name)!.get(kind.name)!.push(((cpuEnd - cpuStart) * 1000) / Math.max(1, l.perSec * l.seconds));
      }
    }
  }
  const peakOf = (s: Server, kind: FrameKind['name']): number => median(peaks.get(s.name)!.get(kind)!);
  const halves = new Map(servers.map((s) => [s.name, [] as Load[]]));
  const fixed = new Map(servers.map((s) => [s.name, [] as Array<{ load: Load; cpuUsPerMsg: number }>]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of servers) halves.get(s.name)!.push(counted(s, await load(s.port, { mode: 'rate', ratePerSec: peakOf(s, 'json') / 2 })));
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of servers) {
      const f = await fixedRate(s);
      counted(s, f.load);
      fixed.get(s.name)!.push(f);
    }
  }
  return new Map(servers.map((s) => {
    const half = [...halves.get(s.name)!].sort((a, b) => a.p99Ms - b.p99Ms)[Math.floor(ROUNDS / 2)]!;
    const f = [...fixed.get(s.name)!].sort((a, b) => a.cpuUsPerMsg - b.cpuUsPerMsg)[Math.floor(ROUNDS / 2)]!;
    const peak = Object.fromEntries(KINDS.map((k) => [k.name, peakOf(s, k.name)])) as Measured['peak'];
    const peakRounds = Object.fromEntries(KINDS.map((k) => [k.name, peaks.get(s.name)!.get(k.name)!.map(Math.round)])) as Measured['peakRounds'];
    const peakCpuUsPerMsg = Object.fromEntries(KINDS.map((k) => [k.name, median(peakCpu.get(s.name)!.get(k.name)!)])) as Measured['peakCpuUsPerMsg'];
    return [s.name, { peak, peakRounds, peakCpuUsPerMsg, half, fixed: f.load, cpuUsPerMsg: f.cpuUsPerMsg, errors: errors.get(s.name)! }];
  }));
}

/**
 * Rows and JSON of the light-load part: gsf against the raw echo at each rate, and against the
 * same echo with one round trip through a worker thread (the floor of running handlers off the
 * I/O thread on this machine).
 */
function lightReport(light: Map<string, LightResult>): { rows: BenchRow[]; json: Record<string, unknown> } {
  const g = light.get('gsf')!;
  const raw = light.get('raw uWS')!;
  const hop = light.get('uWS + worker hop')!;
  const rows: BenchRow[] = [
    { label: 'light: gsf idle CPU (percent of a core)', value: g.idleCpuPercent, unit: '%' },
    { label: 'light: raw uWS idle CPU (percent of a core)', value: raw.idleCpuPercent, unit: '%' },
  ];
  LIGHT_RATES.forEach((rate, i) => {
    const a = g.rates[i]!;
    const b = raw.rates[i]!;
    const where = `light, ${rate.perSec} msgs/s (${rate.clients} client${rate.clients > 1 ? 's' : ''}, every ${rate.everyMs} ms)`;
    rows.push(
      { label: `${where}: gsf CPU (percent of a core)`, value: a.cpuPercent, unit: '%' },
      { label: `${where}: raw uWS CPU (percent of a core)`, value: b.cpuPercent, unit: '%' },
      { label: `${where}: ratio gsf / raw uWS CPU`, value: a.cpuPercent / b.cpuPercent, unit: 'x' },
      { label: `${where}: gsf CPU per message`, value: a.cpuUsPerMsg, unit: 'µs/msg' },
      { label: `${where}: raw uWS CPU per message`, value: b.cpuUsPerMsg, unit: 'µs/msg' },
      { label: `${where}: uWS + worker hop CPU per message`, value: hop.rates[i]!.cpuUsPerMsg, unit: 'µs/msg' },
      { label: `${where}: ratio gsf / uWS + worker hop CPU`, value: a.cpuPercent / hop.rates[i]!.cpuPercent, unit: 'x' },
    );
  });
  const first = (r: LightResult) => r.rates[0]!.load;
  rows.push(
    { label: `light, ${LIGHT_RATES[0].perSec} msgs/s: gsf p50 round trip (µs)`, value: first(g).p50Ms * 1000, unit: 'µs' },
    { label: `light, ${LIGHT_RATES[0].perSec} msgs/s: gsf p99 round trip (µs)`, value: first(g).p99Ms * 1000, unit: 'µs' },
    { label: `light, ${LIGHT_RATES[0].perSec} msgs/s: raw uWS p50 round trip (µs)`, value: first(raw).p50Ms * 1000, unit: 'µs' },
    { label: `light, ${LIGHT_RATES[0].perSec} msgs/s: raw uWS p99 round trip (µs)`, value: first(raw).p99Ms * 1000, unit: 'µs' },
    { label: `light, ${LIGHT_RATES[0].perSec} msgs/s: uWS + worker hop p50 round trip (µs)`, value: first(hop).p50Ms * 1000, unit: 'µs' },
    { label: `light, ${LIGHT_RATES[0].perSec} msgs/s: uWS + worker hop p99 round trip (µs)`, value: first(hop).p99Ms * 1000, unit: 'µs' },
  );
  const ratios = LIGHT_RATES.map((rate, i) => ({
    msgs_per_sec: rate.perSec, cpu_gsf_vs_uws: +(g.rates[i]!.cpuPercent / raw.rates[i]!.cpuPercent).toFixed(2),
    cpu_gsf_vs_uws_worker_hop: +(g.rates[i]!.cpuPercent / hop.rates[i]!.cpuPercent).toFixed(2),
  }));
  return { rows, json: { event_threads: 1, gsf: lightJson(g), baseline_uws_echo: lightJson(raw), baseline_uws_worker_hop: lightJson(hop), ratios } };
}

/** `--light`: only the light-load part, against a gsf with one event thread and the raw echo. */
async function runLight(): Promise<void> {
  const servers = [await gsfServer(1), await baselineServer('uws'), await baselineServer('uws-hop')];
  try {
    const { rows, json } = lightReport(await lightLoad(servers));
    printReport('sessions --light', rows, { cores: os.availableParallelism(), light: json });
  } finally {
    await Promise.all(servers.map((s) => stopProcess(s.child)));
  }
}

function serverJson(m: Measured): Record<string, unknown> {
  return {
    msgs_per_sec: Math.round(m.peak.json), msgs_per_sec_json_varied: Math.round(m.peak['json-varied']), msgs_per_sec_msgpack: Math.round(m.peak.msgpack),
    msgpack_vs_json: +(m.peak.msgpack / m.peak.json).toFixed(3),
    peak_rounds: m.peakRounds,
    peak_cpu_us_per_msg: Object.fromEntries(Object.entries(m.peakCpuUsPerMsg).map(([k, v]) => [k, +v.toFixed(2)])),
    p50_ms: ms(m.half.p50Ms), p99_ms: ms(m.half.p99Ms),
    fixed_rate_p50_ms: ms(m.fixed.p50Ms), fixed_rate_p99_ms: ms(m.fixed.p99Ms), fixed_rate_cpu_us_per_msg: +m.cpuUsPerMsg.toFixed(2),
    error_frames: m.errors,
  };
}

/** `--io-threads=N[,M…]`: the I/O threads of the measured gsf (`SessionService.io_threads_size`); default 1. */
function ioThreadsOf(args: string[]): number[] {
  const arg = args.find((a) => a.startsWith('--io-threads='));
  if (arg === undefined) return [1];
  const list = arg.slice('--io-threads='.length).split(',').map(Number);
  if (list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--io-threads takes positive integers, got '${arg}'`);
  return list;
}

/**
 * `--peak-only`: JSON peaks of gsf with each `--io-threads` count against the raw uWS echo
 * (one thread), interleaved rounds, nothing else: the scaling figure of the I/O threads.
 */
async function runPeaks(ioThreads: number[]): Promise<void> {
  const servers: Server[] = [];
  try {
    for (const n of ioThreads) servers.push({ ...(await gsfServer(EVENT_THREADS, n === 1 ? {} : { io_threads_size: n })), name: `gsf io=${n}` });
    servers.push(await baselineServer('uws'));
    for (const s of servers) await load(s.port, { mode: 'peak', frames: FRAMES.json, durationMs: 1000 }); // warm-up
    const peaks = new Map(servers.map((s) => [s.name, [] as number[]]));
    let errors = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const s of servers) {
        const l = await load(s.port, { mode: 'peak', frames: FRAMES.json });
        errors += l.errors + l.others;
        peaks.get(s.name)!.push(l.perSec);
      }
    }
    const raw = median(peaks.get('raw uWS')!);
    const rows: BenchRow[] = [];
    const json: Record<string, unknown> = {};
    for (const n of ioThreads) {
      const g = median(peaks.get(`gsf io=${n}`)!);
      rows.push(
        { label: `gsf, io_threads_size ${n}: session → event → handler → reply (JSON)`, value: g, unit: 'msgs/s' },
        { label: `ratio gsf (io_threads_size ${n}) / raw uWS echo (one thread)`, value: g / raw, unit: 'x' },
      );
      json[`io_${n}`] = { msgs_per_sec: Math.round(g), ratio_vs_uws: +(g / raw).toFixed(3), rounds: peaks.get(`gsf io=${n}`)!.map(Math.round) };
    }
    rows.push({ label: 'baseline raw uWebSockets.js echo, one thread', value: raw, unit: 'msgs/s' });
    rows.push({ label: 'error or unexpected frames over the run (must be 0)', value: errors, unit: 'frames' });
    printReport('sessions --peak-only', rows, {
      cores: os.availableParallelism(), event_threads: EVENT_THREADS, load_threads: LOAD_THREADS, connections: CONNECTIONS, window: WINDOW,
      rounds: ROUNDS, io_threads: ioThreads, gsf: json, baseline_uws_echo: { msgs_per_sec: Math.round(raw), rounds: peaks.get('raw uWS')!.map(Math.round) },
      error_frames: errors,
    });
  } finally {
    await Promise.all(servers.map((s) => stopProcess(s.child)));
  }
}

export async function run(args: string[] = []): Promise<void> {
  if (args.includes('--light') || process.env.GSF_BENCH_LIGHT === 'only') return runLight();
  const ioThreads = ioThreadsOf(args);
  if (args.includes('--peak-only')) return runPeaks(ioThreads);
  if (ioThreads.length !== 1) throw new Error('--io-threads takes one count without --peak-only');
  const servers = [await gsfServer(EVENT_THREADS, ioThreads[0] === 1 ? {} : { io_threads_size: ioThreads[0] }), await baselineServer('uws'), await baselineServer('ws')];
  let measured: Map<string, Measured>;
  let light: Map<string, LightResult>;
  try {
    measured = await measure(servers);
    // The light-load part wants one event thread; the measured gsf has it on 2 cores.
    const lightGsf = EVENT_THREADS === 1 ? servers[0]! : await gsfServer(1);
    const hop = await baselineServer('uws-hop');
    light = await lightLoad([lightGsf, servers[1]!, hop]);
    await stopProcess(hop.child);
    if (lightGsf !== servers[0]) await stopProcess(lightGsf.child);
  } finally {
    await Promise.all(servers.map((s) => stopProcess(s.child)));
  }
  const idle = await idleSessions();
  const [g, raw, ws] = ['gsf', 'raw uWS', 'ws'].map((n) => measured.get(n)!) as [Measured, Measured, Measured];
  const lightPart = lightReport(light);
  const rows: BenchRow[] = KINDS.flatMap((k) => [
    { label: `${k.label}: gsf, session → event → handler → reply (${CONNECTIONS} conns × ${WINDOW} in flight)`, value: g.peak[k.name], unit: 'msgs/s' },
    { label: `${k.label}: baseline raw uWebSockets.js echo`, value: raw.peak[k.name], unit: 'msgs/s' },
    { label: `${k.label}: baseline ws server, same handler inline`, value: ws.peak[k.name], unit: 'msgs/s' },
    { label: `${k.label}: ratio gsf / raw uWS`, value: g.peak[k.name] / raw.peak[k.name], unit: 'x' },
    { label: `${k.label}: ratio gsf / ws`, value: g.peak[k.name] / ws.peak[k.name], unit: 'x' },
  ]);
  rows.push(
    { label: 'ratio msgpack / JSON sessions, gsf', value: g.peak.msgpack / g.peak.json, unit: 'x' },
    { label: 'gsf at peak: server CPU per message, JSON (canonical)', value: g.peakCpuUsPerMsg.json, unit: 'µs/msg' },
    { label: 'gsf at peak: server CPU per message, msgpack', value: g.peakCpuUsPerMsg.msgpack, unit: 'µs/msg' },
    { label: 'ratio msgpack / JSON, raw uWS echo', value: raw.peak.msgpack / raw.peak.json, unit: 'x' },
    { label: 'ratio msgpack / JSON, ws server', value: ws.peak.msgpack / ws.peak.json, unit: 'x' },
    { label: `gsf at half of peak (${Math.round(g.peak.json / 2)} msgs/s): p50 round trip (µs)`, value: g.half.p50Ms * 1000, unit: 'µs' },
    { label: 'gsf at half of peak: p99 round trip (µs)', value: g.half.p99Ms * 1000, unit: 'µs' },
    { label: 'raw uWS at half of its peak: p99 round trip (µs)', value: raw.half.p99Ms * 1000, unit: 'µs' },
    { label: 'ws at half of its peak: p99 round trip (µs)', value: ws.half.p99Ms * 1000, unit: 'µs' },
    ...([['gsf', g], ['raw uWS', raw], ['ws', ws]] as const).flatMap(([name, m]) => [
      { label: `${name} at ${FIXED_RATE} msgs/s: server CPU per message`, value: m.cpuUsPerMsg, unit: 'µs/msg' },
      { label: `${name} at ${FIXED_RATE} msgs/s: p99 round trip (µs)`, value: m.fixed.p99Ms * 1000, unit: 'µs' },
      { label: `${name}: error or unexpected frames over the run (must be 0)`, value: m.errors, unit: 'frames' },
    ]),
    ...lightPart.rows,
    { label: 'idle sessions held by one gsf process', value: idle.sessions, unit: 'sessions' },
    { label: 'resident memory per idle session (RSS slope over the second half)', value: idle.bytesPerSession, unit: 'bytes' },
  );
  printReport('sessions', rows, {
    cores: os.availableParallelism(), event_threads: EVENT_THREADS, io_threads: ioThreads[0], rounds: ROUNDS, fixed_rate: FIXED_RATE,
    load_threads: LOAD_THREADS, connections: CONNECTIONS, window: WINDOW,
    gsf: { ...serverJson(g), half_load_per_sec: Math.round(g.peak.json / 2) },
    baseline_uws_echo: serverJson(raw),
    baseline_ws_inline: serverJson(ws),
    ratio_vs_uws: +(g.peak.json / raw.peak.json).toFixed(3),
    ratio_vs_ws: +(g.peak.json / ws.peak.json).toFixed(2),
    frames: Object.fromEntries(KINDS.map((k) => [k.name, {
      gsf: Math.round(g.peak[k.name]), uws: Math.round(raw.peak[k.name]), ws: Math.round(ws.peak[k.name]),
      ratio_vs_uws: +(g.peak[k.name] / raw.peak[k.name]).toFixed(3), ratio_vs_ws: +(g.peak[k.name] / ws.peak[k.name]).toFixed(2),
    }])),
    msgpack_vs_json: { gsf: +(g.peak.msgpack / g.peak.json).toFixed(3), uws: +(raw.peak.msgpack / raw.peak.json).toFixed(3), ws: +(ws.peak.msgpack / ws.peak.json).toFixed(3) },
    light: lightPart.json,
    idle: { sessions: idle.sessions, bytes_per_session: Math.round(idle.bytesPerSession), rss_before_mb: +idle.rssBeforeMb.toFixed(1), rss_after_mb: +idle.rssAfterMb.toFixed(1) },
  });
}
