/**
 * Collapses floods of one kind of log line. Each line comes with a key (an event name, a
 * route): per key and whole second, the first `perKeyPerSecond` lines are written exactly as
 * given; the rest are counted, and once that second is over one summary line says how many
 * were left out. One stalled second that would have written hundreds of identical `Slow event`
 * lines writes N of them and a summary.
 *
 * The summary of a second is written before the key's next line, by `flush()`, and by a timer
 * once a second (unref'd, so it never keeps a process alive).
 */

/** Where limited lines go (a `Logger` fits). */
export interface LimitedLog {
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface LineLimiterOptions {
  /** Lines written per key and second before the rest are counted instead. */
  perKeyPerSecond: number;
  log: LimitedLog;
  /** Milliseconds clock (tests inject one). */
  now?: () => number;
  /** Flush summaries once a second by a timer (default true). */
  timer?: boolean;
  /** Most keys tracked at once; lines of further keys share the key `*` (default 10,000). */
  maxKeys?: number;
}

export interface LineLimiter {
  /** Writes a WARNING line (with its fields) unless its key used up this second's lines. */
  warn(key: string, line: string, fields?: Record<string, unknown>): void;
  /** Writes an ERROR line (with its fields) unless its key used up this second's lines. */
  error(key: string, line: string, fields?: Record<string, unknown>): void;
  /** Writes the summaries of seconds that are over, and forgets idle keys. */
  flush(): void;
  /** Writes every pending summary, the current second's too (a thread about to end). */
  flushAll(): void;
  /** `flushAll`, and stops the timer. */
  close(): void;
}

const WARNING = 1;
const ERROR = 2;

interface KeyState {
  second: number;
  written: number;
  suppressed: number;
  /** Highest level among the suppressed lines: the summary is written at it. */
  level: number;
}

/** Creates a limiter; see the module comment. */
export function createLineLimiter(options: LineLimiterOptions): LineLimiter {
  const { perKeyPerSecond: limit, log } = options;
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError('perKeyPerSecond must be a positive integer');
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 10_000;
  const keys = new Map<string, KeyState>();

  const summarize = (key: string, s: KeyState): void => {
    if (s.suppressed === 0) return;
    const text = `suppressed ${s.suppressed} more line(s) of '${key}' in one second (at most ${limit} per second are written)`;
    if (s.level === ERROR) log.error(text);
    else log.warn(text);
    s.suppressed = 0;
    s.level = 0;
  };

  const write = (level: number, key: string, line: string, fields?: Record<string, unknown>): void => {
    const second = Math.floor(now() / 1000);
    let s = keys.get(key);
    if (s === undefined && keys.size >= maxKeys) {
      key = '*';
      s = keys.get(key);
    }
    if (s === undefined) {
      s = { second, written: 0, suppressed: 0, level: 0 };
      keys.set(key, s);
    } else if (s.second !== second) {
      summarize(key, s);
      s.second = second;
      s.written = 0;
    }
    if (s.written < limit) {
      s.written++;
      if (level === ERROR) log.error(line, fields);
      else log.warn(line, fields);
      return;
    }
    s.suppressed++;
    s.level = Math.max(s.level, level);
  };

  const flush = (): void => {
    const second = Math.floor(now() / 1000);
    for (const [key, s] of keys) {
      if (s.second === second) continue;
      summarize(key, s);
      keys.delete(key);
    }
  };

  const flushAll = (): void => {
    for (const [key, s] of keys) summarize(key, s);
    keys.clear();
  };

  const timer = options.timer === false ? null : setInterval(flush, 1000);
  timer?.unref();

  return {
    warn: (key, line, fields) => write(WARNING, key, line, fields),
    error: (key, line, fields) => write(ERROR, key, line, fields),
    flush,
    flushAll,
    close: () => {
      if (timer !== null) clearInterval(timer);
      flushAll();
    },
  };
}
