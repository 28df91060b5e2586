/**
 * CPU time of this process's threads, from /proc (Linux). Used to charge a server only for
 * the threads it already had when a load began, not for load-generator threads started later.
 */
import fs from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU milliseconds (user + system) per thread id. */
export function threadCpuMs(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' '); // the name may hold ') '
      out.set(tid, (Number(fields[11]) + Number(fields[12])) * TICK_MS);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** Runs `work` and returns its result with the CPU ms spent meanwhile by the threads that existed before it. */
export async function cpuOfExistingThreads<T>(work: () => Promise<T>): Promise<{ result: T; cpuMs: number }> {
  const before = threadCpuMs();
  const result = await work();
  const after = threadCpuMs();
  let cpuMs = 0;
  for (const [tid, ms] of after) {
    const start = before.get(tid);
    if (start !== undefined) cpuMs += ms - start;
  }
  return { result, cpuMs };
}
