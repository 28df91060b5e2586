/**
 * The session counts (`SessionStats`) of every I/O thread in one SharedArrayBuffer: each thread
 * writes its own row, the main thread reads the sums (and writes its own row, the last).
 */
import type { SessionStats } from '../listener-types.ts';

export const STAT_FIELDS = [
  'opened', 'closed', 'refused', 'messages', 'protocolErrors', 'droppedInMaintenance', 'backpressureCloses',
  'droppedNoSession', 'droppedBackpressure',
] as const satisfies ReadonlyArray<keyof SessionStats>;

export function statsBuffer(rows: number): SharedArrayBuffer {
  return new SharedArrayBuffer(rows * STAT_FIELDS.length * 8);
}

/** One row, read and written like a plain `SessionStats` (only its own thread writes it). */
export function statsRow(buffer: SharedArrayBuffer, row: number): SessionStats {
  const cells = new Float64Array(buffer, row * STAT_FIELDS.length * 8, STAT_FIELDS.length);
  const stats = {} as SessionStats;
  STAT_FIELDS.forEach((name, i) => {
    Object.defineProperty(stats, name, { get: () => cells[i]!, set: (v: number) => { cells[i] = v; }, enumerable: true });
  });
  return stats;
}

/** The sums of every row, read when asked. */
export function statsSum(buffer: SharedArrayBuffer): SessionStats {
  const all = new Float64Array(buffer);
  const rows = all.length / STAT_FIELDS.length;
  const stats = {} as SessionStats;
  STAT_FIELDS.forEach((name, i) => {
    Object.defineProperty(stats, name, {
      get: () => {
        let sum = 0;
        for (let r = 0; r < rows; r++) sum += all[r * STAT_FIELDS.length + i]!;
        return sum;
      },
      enumerable: true,
    });
  });
  return stats;
}
