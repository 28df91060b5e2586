/**
 * Maintenance mode (SPEC 2.4, 3.1, 4.3). The record is `date_start`, `date_end` (format
 * `YYYY/MM/DD HH:MM`, UTC) and `messages`. It comes from the maintenance file at start and
 * from PUT /v1/maintenance/update later. While maintenance is on, every connected session is
 * sent `_maintenance` (and each new session on connect), and other client messages are dropped.
 *
 * The dates are informative unless `Maintenance.follow_schedule` is true: then maintenance
 * turns itself on at `date_start` and off at `date_end` (and at start, if the window is open).
 * An explicit `under_maintenance` from the manifest or a PUT sets the state at once; the
 * schedule acts again at its next boundary.
 */
import fs from 'node:fs';
import path from 'node:path';
import { hasLoneSurrogate, shown } from '../text.ts';
import { ManifestError, type Manifest } from '../config/manifest.ts';
import { parseJsonText } from '../config/json-text.ts';

export interface MaintenanceRecord {
  date_start: string;
  date_end: string;
  messages: string;
}

export interface MaintenanceState extends MaintenanceRecord {
  under_maintenance: boolean;
  follow_schedule: boolean;
}

export const DATE_FORMAT = 'YYYY/MM/DD HH:MM';
const RECORD_KEYS = ['date_start', 'date_end', 'messages'] as const;

/** Milliseconds since the epoch of a `YYYY/MM/DD HH:MM` date (UTC), or null when malformed. */
export function parseMaintenanceDate(text: string): number | null {
  const m = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2})$/.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi] = m.slice(1).map(Number) as [number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59) return null;
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi));
  date.setUTCFullYear(y, mo - 1, d); // Date.UTC reads the years 0 to 99 as 1900 to 1999
  const ms = date.getTime();
  if (date.getUTCDate() !== d) return null; // 2026/02/30
  return ms;
}

/** A validation problem: the field it concerns (if one) and the message. */
export interface RecordProblem {
  field?: string;
  message: string;
}

/**
 * Checks a maintenance record. `update` (PUT) also allows `under_maintenance` (boolean);
 * the file allows only the three record keys. Returns the problem, or null.
 */
export function checkRecord(value: unknown, update: boolean): RecordProblem | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { message: 'must be a JSON object' };
  const v = value as Record<string, unknown>;
  const allowed: string[] = update ? [...RECORD_KEYS, 'under_maintenance'] : [...RECORD_KEYS];
  for (const key of Object.keys(v)) {
    if (!allowed.includes(key)) return { field: key, message: `unknown key '${key}' (allowed: ${allowed.join(', ')})` };
  }
  for (const key of RECORD_KEYS) {
    if (!(key in v)) return { field: key, message: `'${key}' is required` };
    if (typeof v[key] !== 'string') return { field: key, message: `'${key}' must be a string` };
    // Sessions of both codecs must get the same text: one with no UTF-8 form cannot be sent as is.
    if (hasLoneSurrogate(v[key] as string)) return { field: key, message: `'${key}' holds an unpaired UTF-16 surrogate (text with no UTF-8 form)` };
  }
  if (update && 'under_maintenance' in v && typeof v.under_maintenance !== 'boolean') {
    return { field: 'under_maintenance', message: "'under_maintenance' must be a boolean" };
  }
  for (const key of ['date_start', 'date_end'] as const) {
    if (parseMaintenanceDate(v[key] as string) === null) {
      return { field: key, message: `'${key}' must be a date in the format ${DATE_FORMAT} (got '${shown(v[key] as string)}')` };
    }
  }
  if (parseMaintenanceDate(v.date_end as string)! < parseMaintenanceDate(v.date_start as string)!) {
    return { field: 'date_end', message: "'date_end' must not be before 'date_start'" };
  }
  return null;
}

/**
 * The record of the manifest's Maintenance component: its file's, or an empty one. Problems are
 * ManifestErrors: the server checks them first, so a bad file stops the start before any
 * thread starts.
 */
export function manifestMaintenanceRecord(manifest: Manifest): MaintenanceRecord {
  const m = manifest.components.Maintenance!;
  const file = m.maintenance_file as string;
  if (m.under_maintenance === true && file === '') {
    throw new ManifestError(`${manifest.file}: Maintenance.under_maintenance is true but Maintenance.maintenance_file is not set`);
  }
  return file !== '' ? loadMaintenanceFile(path.resolve(manifest.dir, file), manifest.file) : { date_start: '', date_end: '', messages: '' };
}

/** Reads and checks the maintenance file; problems stop the start with a ManifestError. */
export function loadMaintenanceFile(file: string, manifestFile: string): MaintenanceRecord {
  const where = `${manifestFile}: Maintenance.maintenance_file '${file}'`;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ManifestError(`${where} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let json: unknown;
  try {
    json = parseJsonText(text);
  } catch (err) {
    throw new ManifestError(`${where} is not valid JSON (${(err as Error).message})`);
  }
  const problem = checkRecord(json, false);
  if (problem) throw new ManifestError(`${where}: ${problem.message}`);
  const r = json as MaintenanceRecord;
  return { date_start: r.date_start, date_end: r.date_end, messages: r.messages };
}

/** The live maintenance state of a server (main thread). */
export class Maintenance {
  private state: MaintenanceState;
  private timer: NodeJS.Timeout | null = null;
  private readonly listeners: Array<(state: MaintenanceState, previous: MaintenanceState) => void> = [];

  constructor(record: MaintenanceRecord, underMaintenance: boolean, followSchedule: boolean) {
    this.state = { under_maintenance: underMaintenance, ...record, follow_schedule: followSchedule };
  }

  /** Starts following the schedule (when enabled). */
  start(explicitlyOn: boolean): void {
    if (this.state.follow_schedule && !explicitlyOn) this.set({ under_maintenance: this.inWindow(Date.now()) });
    this.schedule();
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  get on(): boolean {
    return this.state.under_maintenance;
  }

  snapshot(): MaintenanceState {
    return { ...this.state };
  }

  /** Calls `fn` after every change. */
  onChange(fn: (state: MaintenanceState, previous: MaintenanceState) => void): void {
    this.listeners.push(fn);
  }

  /** Applies a checked PUT body: the record is replaced; the state as given or by the schedule. */
  update(record: MaintenanceRecord, underMaintenance: boolean | undefined): MaintenanceState {
    const patch: Partial<MaintenanceState> = { date_start: record.date_start, date_end: record.date_end, messages: record.messages };
    if (underMaintenance !== undefined) patch.under_maintenance = underMaintenance;
    else if (this.state.follow_schedule) patch.under_maintenance = this.inWindowOf(record, Date.now());
    this.set(patch);
    this.schedule();
    return this.snapshot();
  }

  private inWindow(now: number): boolean {
    return this.inWindowOf(this.state, now);
  }

  private inWindowOf(r: MaintenanceRecord, now: number): boolean {
    return now >= parseMaintenanceDate(r.date_start)! && now < parseMaintenanceDate(r.date_end)!;
  }

  private set(patch: Partial<MaintenanceState>): void {
    const previous = this.state;
    const next = { ...previous, ...patch };
    const changed = next.under_maintenance !== previous.under_maintenance
      || (next.under_maintenance && (next.date_start !== previous.date_start || next.date_end !== previous.date_end || next.messages !== previous.messages));
    this.state = next;
    if (changed) for (const fn of this.listeners) fn(this.snapshot(), previous);
  }

  /** Arms a timer for the next schedule boundary. */
  private schedule(): void {
    this.stop();
    if (!this.state.follow_schedule) return;
    const now = Date.now();
    const boundaries = [parseMaintenanceDate(this.state.date_start)!, parseMaintenanceDate(this.state.date_end)!].filter((t) => t > now);
    if (boundaries.length === 0) return;
    const wait = Math.min(Math.min(...boundaries) - now, 2 ** 31 - 1);
    this.timer = setTimeout(() => {
      this.timer = null;
      const t = Date.now();
      if (t >= Math.min(...boundaries)) this.set({ under_maintenance: this.inWindow(t) });
      this.schedule();
    }, wait);
    this.timer.unref();
  }
}
