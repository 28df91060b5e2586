/**
 * glog-style structured logging shared by the main thread and every worker.
 *
 * Lines are written synchronously with one write() per line, so lines from different threads
 * never interleave (O_APPEND on a log file; a pipe write under PIPE_BUF on stdout); a line is
 * always written whole (write-out.ts). A burst of
 * lines inside `groupLines` goes out in writes of whole lines under PIPE_BUF when it ends. The levels
 * and `v` are read on every call from the flag registry, so REST changes apply at once.
 *
 * Messages carry client-supplied text (player ids, session frames, counter and path names).
 * So that no client can write a line of its own, the text form escapes every character that
 * could end or disguise a line: C0 controls (line feed, carriage return, tab, escape …), DEL,
 * C1 controls (NEL among them) and the Unicode line and paragraph separators. The JSON form
 * escapes them by its own rules, and U+2028/U+2029 as well.
 */
import fs from 'node:fs';
import { threadId, isMainThread } from 'node:worker_threads';
import { nameDescriptor, writeOut } from './write-out.ts';

export const LogLevel = { INFO: 0, WARNING: 1, ERROR: 2, FATAL: 3 } as const;
const LEVEL_NAMES = ['INFO', 'WARNING', 'ERROR', 'FATAL'] as const;

export type LogFields = Record<string, unknown>;

/** Where a logger reads its live settings. */
export interface LogFlags {
  get(name: string): unknown;
}

export interface LogOutput {
  /** Append lines to this file; '' means standard output. */
  file: string;
  format: 'text' | 'json';
  /** How lines name the thread (default: `main`, or `worker-<threadId>` for an event thread). */
  thread?: string;
}

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Verbose line, written when `level <= v`. */
  vlog(level: number, msg: string, fields?: LogFields): void;
  /** Whether `vlog(level, …)` would write (to skip building expensive messages). */
  vEnabled(level: number): boolean;
}

const fileDescriptors = new Map<string, number>();

function fdFor(file: string): number {
  if (file === '') return 1;
  let fd = fileDescriptors.get(file);
  if (fd === undefined) {
    fd = fs.openSync(file, 'a');
    fileDescriptors.set(file, fd);
    nameDescriptor(fd, `log_file '${file}'`);
  }
  return fd;
}

/** The descriptor lines for `file` are written to (standard output for ''), opened once per process. */
export function logDescriptor(file: string): number {
  return fdFor(file);
}

/** Opens `file` for appending now (once per process), so that a file that cannot be opened is reported at start; throws the system error. */
export function openLogFile(file: string): void {
  fdFor(file);
}

/**
 * Lines held by `groupLines`, per descriptor. A group's write stays under PIPE_BUF (4,096
 * bytes), so on a pipe too it is never split between other threads' lines.
 */
const GROUP_BYTES = 4096;
const grouped = new Map<number, string>();
let grouping = 0;

function writeLine(fd: number, line: string): void {
  if (grouping === 0) return writeOut(fd, line);
  const held = grouped.get(fd);
  if (held === undefined) {
    grouped.set(fd, line);
  } else if (held.length + line.length > GROUP_BYTES) {
    writeOut(fd, held);
    grouped.set(fd, line);
  } else {
    grouped.set(fd, held + line);
  }
}

/**
 * Runs `fn` with this thread's lines held and written together when it returns (or throws):
 * one write for a burst of lines, such as the audit lines of a batch of answers, instead of one
 * each. Lines stay whole and in order.
 */
export function groupLines<T>(fn: () => T): T {
  grouping++;
  try {
    return fn();
  } finally {
    if (--grouping === 0) {
      for (const [fd, text] of grouped) writeOut(fd, text);
      grouped.clear();
    }
  }
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

// C0 controls, DEL, C1 controls (NEL is U+0085) and the Unicode line and paragraph separators.
// Matching control characters is the point of these two expressions.
/* eslint-disable no-control-regex */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const UNSAFE_TEST = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/* eslint-enable no-control-regex */
const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeChar(c: string): string {
  return SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * Makes `text` safe to write inside one log line: `\n`, `\r` and `\t` become those two
 * characters, every other unsafe character `\uXXXX` (both are JSON escapes, so escaped JSON
 * stays JSON). Backslashes are left as they are.
 */
export function escapeLogText(text: string): string {
  return UNSAFE_TEST.test(text) ? text.replace(UNSAFE, escapeChar) : text;
}

/** `YYYYMMDD HH:MM:SS.` of the second last stamped: lines of one second share it. */
let stampSecond = -1;
let stampPrefix = '';

/** `YYYYMMDD HH:MM:SS.mmm` (UTC) of now. */
function stampNow(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== stampSecond) {
    const d = new Date(second * 1000);
    stampPrefix = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())} ` +
      `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.`;
    stampSecond = second;
  }
  const ms = now - second * 1000;
  return stampPrefix + (ms < 10 ? `00${ms}` : ms < 100 ? `0${ms}` : `${ms}`);
}

/**
 * JSON of log fields that never throws: a BigInt is written as its digits, an Error as its name,
 * message and stack, an object met again on the way down as "[Circular]", and one whose
 * `toJSON` throws as the reason.
 */
function fieldsJson(value: unknown): string {
  const path: object[] = [];
  const replacer = function (this: unknown, _key: string, v: unknown): unknown {
    // `this` is the holder: the objects above the value are the path down to it.
    while (path.length > 0 && path[path.length - 1] !== this) path.pop();
    if (typeof v === 'bigint') return v.toString();
    if (v instanceof Error) v = { name: v.name, message: v.message, stack: v.stack };
    if (typeof v === 'object' && v !== null) {
      if (path.includes(v)) return '[Circular]';
      path.push(v);
    }
    return v;
  };
  try {
    return JSON.stringify(value, replacer) ?? 'null';
  } catch (err) {
    return JSON.stringify(notWritten(err));
  }
}

const notWritten = (err: unknown): string => `[fields not written: ${err instanceof Error ? err.message : String(err)}]`;

function textLine(level: number, thread: string, msg: string, fields?: LogFields): string {
  const stamp = stampNow();
  const extra = fields && Object.keys(fields).length > 0 ? ` ${escapeLogText(fieldsJson(fields))}` : '';
  return `${LEVEL_NAMES[level]![0]}${stamp} ${thread}] ${escapeLogText(msg)}${extra}\n`;
}

const RESERVED = ['time', 'level', 'thread', 'msg'];

function jsonLine(level: number, thread: string, msg: string, fields?: LogFields): string {
  const head = JSON.stringify({ time: new Date().toISOString(), level: LEVEL_NAMES[level], thread, msg });
  let rest = '{}';
  if (fields) {
    // The fields apart from the record's own keys: a field that throws when read (a getter, a
    // toJSON) costs the fields, never the line or the caller.
    try {
      // No prototype: a field named `__proto__` is a key like any other.
      const record: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const k of Object.keys(fields)) {
        // A field never overwrites the record's own keys: a clashing one is kept as
        // `field_<name>` (`field_field_<name>` when that is a field too, and so on).
        let key = k;
        while (RESERVED.includes(key) || (key !== k && Object.prototype.hasOwnProperty.call(fields, key))) key = `field_${key}`;
        record[key] = fields[k];
      }
      rest = fieldsJson(record);
    } catch (err) {
      rest = JSON.stringify({ fields_error: notWritten(err) });
    }
    if (!rest.startsWith('{')) rest = JSON.stringify({ fields_error: JSON.parse(rest) as unknown });
  }
  const line = rest === '{}' ? head : `${head.slice(0, -1)},${rest.slice(1)}`;
  return line.replace(/[\u2028\u2029]/g, escapeChar) + '\n';
}

/** Creates a logger for this thread. */
export function createLogger(flags: LogFlags, output: LogOutput): Logger {
  const thread = output.thread ?? (isMainThread ? 'main' : `worker-${threadId}`);
  const render = output.format === 'json' ? jsonLine : textLine;
  const write = (level: number, msg: string, fields?: LogFields): void => {
    if (level < Number(flags.get('minloglevel'))) return;
    const line = render(level, thread, msg, fields);
    const fd = fdFor(output.file);
    writeLine(fd, line);
    if (flags.get('alsologtostderr') === true && fd !== 2) writeLine(2, line);
  };
  return {
    info: (msg, fields) => write(LogLevel.INFO, msg, fields),
    warn: (msg, fields) => write(LogLevel.WARNING, msg, fields),
    error: (msg, fields) => write(LogLevel.ERROR, msg, fields),
    vlog: (level, msg, fields) => {
      if (level <= Number(flags.get('v'))) write(LogLevel.INFO, msg, fields);
    },
    vEnabled: (level) => level <= Number(flags.get('v')),
  };
}
