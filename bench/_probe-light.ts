import fs from 'node:fs';
import { gsfServer } from './session-servers.ts';
import { FRAMES, load } from './session-load.ts';
import { stopProcess } from './processes.ts';

function snap(pid: number): Map<string, { name: string; ticks: number; vcs: number; nvcs: number }> {
  const m = new Map();
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const st = fs.readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8');
      const vcs = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(st)![1]);
      const nvcs = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(st)![1]);
      m.set(t, { name: fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim(), ticks: Number(f[11]) + Number(f[12]), vcs, nvcs });
    } catch { /* gone */ }
  }
  return m;
}

const s = await gsfServer(1);
const pid = s.child.pid!;
await load(s.port, { mode: 'paced', threads: 1, connections: 20, intervalMs: 10, durationMs: 1000 });
const rate = Number(process.env.EVERY ?? 5);
let a: ReturnType<typeof snap> | null = null;
let b: ReturnType<typeof snap> | null = null;
import { spawn } from 'node:child_process';
const perf = process.env.PERF ? spawn('perf', ['record', '-F', '4000', '-g', '-p', String(pid), '-o', '/tmp/perf.data', '--', 'sleep', '4'], { stdio: 'inherit' }) : null;
const r = await load(s.port, { mode: 'paced', frames: FRAMES.json, threads: 1, connections: 1, intervalMs: rate, durationMs: 5000,
  onWindow: (edge) => { if (edge === 'start') a = snap(pid); else b = snap(pid); } });
for (const [t, x] of b!) {
  const y = a!.get(t);
  if (!y) continue;
  const d = x.ticks - y.ticks, v = x.vcs - y.vcs, n = x.nvcs - y.nvcs;
  console.log(`${t} ${x.name.padEnd(16)} cpu=${d * 10}ms vcs/msg=${(v / r.sent).toFixed(2)} nvcs/msg=${(n / r.sent).toFixed(2)}`);
}
console.log('sent', r.sent, 'p50', r.p50Ms);
await stopProcess(s.child);
