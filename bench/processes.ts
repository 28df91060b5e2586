/** Servers that benchmarks run as child processes: start, stop, and their CPU time from /proc (Linux). */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const TICK_MS = 10; // USER_HZ is 100 on Linux

/** `GSF_BENCH_CPU_PROF=<dir>`: node options that make each server thread write a V8 CPU profile there when it stops. */
export function profileArgs(): string[] {
  const dir = process.env.GSF_BENCH_CPU_PROF;
  if (!dir) return [];
  const interval = process.env.GSF_BENCH_CPU_PROF_INTERVAL_US;
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...(interval ? [`--cpu-prof-interval=${interval}`] : [])];
}

/** Runs `node args…` from the project root; resolves once its standard output matches `ready` (group 1: the port). */
export function startProcess(args: string[], ready: RegExp): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...profileArgs(), ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${out}`)));
  });
}

/** Sends SIGTERM and resolves once the process has exited. */
export function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    child.removeAllListeners('exit');
    child.on('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** CPU milliseconds (user + system, every thread) the process has used so far. */
export function processCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' '); // the name may hold ') '
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/**
 * Milliseconds the process's threads have spent runnable but waiting for a CPU so far (the
 * run-queue delay of `/proc/<pid>/task/<tid>/schedstat`; threads that ended are not counted).
 */
export function processRunQueueMs(pid: number): number {
  let ns = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1e6;
}

/** Resident memory of the process in kB. */
export function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/** A loopback port free now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
