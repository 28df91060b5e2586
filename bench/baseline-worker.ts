/** Baseline piscina worker: one task per event, running the same handlers inline. */
import { cpuWork } from './cpu-work.ts';

export default function run(task: { kind: 'noop' | 'cpu'; iterations: number; tag: number }): number {
  if (task.kind === 'cpu') cpuWork(task.iterations);
  return task.tag;
}
