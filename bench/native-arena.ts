/**
 * bench/native, the example game: arena clicks through the C++ game (plugins/arena-native)
 * against the TypeScript game (plugins/arena), each a `gsf start` process of its own with its own
 * SQLite store. Every connection says hello as a player of its own, then keeps a window of
 * clicks in flight (each click changes the player object, the live counters, and invokes a child
 * event; every 100th point broadcasts a chat line to everyone). Both servers run side by side
 * and are measured in interleaved rounds (native, managed, native, ...), medians reported, so a
 * busy moment of a shared machine hits both alike.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gsfServer, type Server } from './session-servers.ts';
import { FRAMES, load, median, type FrameKind } from './session-load.ts';
import { processCpuMs, stopProcess } from './processes.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const PLUGINS = path.join(here, '..', 'plugins');
const CONNECTIONS = Number(process.env.GSF_BENCH_ARENA_CONNECTIONS ?? 32);

const CLICK: FrameKind = {
  ...FRAMES.json,
  message: Buffer.from(JSON.stringify({ type: 'click' })),
  expect: Buffer.from('"type":"click"'),
};

export interface ArenaClicks {
  /** Clicks answered per second, median of the rounds: the C++ game, the TypeScript game. */
  native: number;
  managed: number;
  /** Server CPU time per click (µs), medians. */
  cpuNative: number;
  cpuManaged: number;
  rounds: number;
  connections: number;
}

/** Measures both games in `rounds` interleaved rounds on servers of `eventThreads` event threads. */
export async function arenaClicks(eventThreads: number, rounds: number): Promise<ArenaClicks> {
  const servers: Server[] = [
    await gsfServer(eventThreads, {}, path.join(PLUGINS, 'arena-native')),
    await gsfServer(eventThreads, {}, path.join(PLUGINS, 'arena')),
  ];
  const peaks: number[][] = [[], []];
  const cpu: number[][] = [[], []];
  try {
    const once = async (i: number, durationMs?: number): Promise<void> => {
      const pid = servers[i]!.child.pid!;
      let start = 0, end = 0;
      // The same players every round (the first round creates them): each hello replaces the
      // session of the round before.
      const greet = Array.from({ length: CONNECTIONS }, (_, k) => Buffer.from(JSON.stringify({ type: 'hello', body: { name: `p${k}` } })));
      const l = await load(servers[i]!.port, {
        mode: 'peak', frames: CLICK, connections: CONNECTIONS, greet, greetMark: Buffer.from('"type":"hello"'), durationMs,
        onWindow: (edge) => { if (edge === 'start') start = processCpuMs(pid); else end = processCpuMs(pid); },
      });
      if (l.errors > 0) throw new Error(`arena clicks on ${i === 0 ? 'the C++' : 'the TypeScript'} game: ${l.errors} error frames`);
      if (durationMs !== undefined) return;
      peaks[i]!.push(l.perSec);
      cpu[i]!.push(((end - start) * 1000) / Math.max(1, l.perSec * l.seconds));
    };
    for (let i = 0; i < servers.length; i++) await once(i, 1000); // warm-up
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < servers.length; i++) await once(i);
    }
  } finally {
    for (const s of servers) await stopProcess(s.child);
  }
  return {
    native: median(peaks[0]!), managed: median(peaks[1]!), cpuNative: median(cpu[0]!), cpuManaged: median(cpu[1]!),
    rounds, connections: CONNECTIONS,
  };
}
