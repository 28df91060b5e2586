/**
 * Writes log text to a descriptor whole, whatever the descriptor is: a partial write goes on
 * with the rest, and a non-blocking pipe whose reader is behind (EAGAIN: standard output read by
 * docker, systemd or a parent process) is waited for as a blocking write would be, for up to
 * `PATIENCE_MS` per write. Lines that cannot be written (a full disk, a reader that stopped
 * reading, a closed pipe) are lost, and standard error says so: at the first loss of a
 * descriptor, then at most once a minute with how many were lost meanwhile.
 */
import fs from 'node:fs';

/** How long one write waits for a pipe's reader before its lines are counted lost. */
const PATIENCE_MS = 5000;
const REPORT_EVERY_MS = 60_000;

const pause = new Int32Array(new SharedArrayBuffer(4));
/** What each descriptor is, for the report (`log_file '…'`). */
const names = new Map<number, string>();

interface Losses {
  lost: number;
  reportedAt: number;
  /** The reader stopped reading: later writes do not wait again until one succeeds. */
  stalled: boolean;
}
const losses = new Map<number, Losses>();

/** Names descriptor `fd` in reports of lost lines. */
export function nameDescriptor(fd: number, name: string): void {
  names.set(fd, name);
}

function lost(fd: number, code: string): void {
  let l = losses.get(fd);
  const now = Date.now();
  if (l === undefined) {
    l = { lost: 0, reportedAt: -Infinity, stalled: false };
    losses.set(fd, l);
  }
  l.lost++;
  if (code === 'EAGAIN') l.stalled = true;
  if (now - l.reportedAt < REPORT_EVERY_MS || fd === 2) return;
  const what = names.get(fd) ?? (fd === 1 ? "standard output (log_file '')" : `descriptor ${fd}`);
  const why = code === 'EAGAIN' ? `EAGAIN: its reader took no bytes for ${PATIENCE_MS} ms` : code;
  try {
    fs.writeSync(2, `gsf: ${what} cannot be written (${why}): ${l.lost} log line(s) lost\n`);
  } catch {
    // Standard error is gone too: nothing more can be said.
  }
  l.lost = 0;
  l.reportedAt = now;
}

/** Writes `text` to `fd` whole, or reports it lost (see the file's comment). */
export function writeOut(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let offset = 0;
  let waited = 0;
  while (offset < bytes.length) {
    try {
      offset += fs.writeSync(fd, bytes, offset);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
      if (code === 'EINTR') continue;
      const l = losses.get(fd);
      if (code === 'EAGAIN' && waited < PATIENCE_MS && l?.stalled !== true) {
        Atomics.wait(pause, 0, 0, 1);
        waited++;
        continue;
      }
      lost(fd, code);
      return;
    }
  }
  const l = losses.get(fd);
  if (l !== undefined) l.stalled = false;
}
