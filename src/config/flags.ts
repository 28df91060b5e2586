/**
 * The typed flag registry: every value read at run time. The main thread owns it; a change is
 * published to the native config snapshot, which workers re-read before each batch, so every
 * thread sees it at once (SPEC 4.2 rule 3: code that copied a value earlier keeps its copy).
 */
import type { ArgSpec, ArgType } from './schema.ts';
import { checkValue, type ArgValue } from './manifest.ts';

export interface FlagInfo {
  name: string;
  type: ArgType;
  desc: string;
  mutable: boolean;
  value: ArgValue;
}

export type FlagListener = (name: string, value: ArgValue, previous: ArgValue) => void;

/** Puts a new value in effect before the flag takes it (an event-thread resize); throws when it cannot. */
export type FlagApplier = (value: ArgValue, previous: ArgValue) => Promise<void>;

/** Outcome of setting a flag from text; an invalid value comes with why (`must be …`) when known. */
export type SetResult =
  | { ok: true; value: ArgValue }
  | { ok: false; reason: 'unknown' | 'immutable' }
  | { ok: false; reason: 'invalid'; problem: string | null };

/** Outcome of `setFromTextApplied`: also the change that could not take effect, and why. */
export type ApplyResult = SetResult | { ok: false; reason: 'not_applied'; value: ArgValue; error: unknown };

export class FlagRegistry {
  private readonly flags = new Map<string, FlagInfo>();
  private readonly listeners = new Map<string, FlagListener[]>();
  private readonly specs = new Map<string, ArgSpec>();
  private readonly appliers = new Map<string, FlagApplier>();
  /** The change of each flag being applied now (changes of one flag are applied one at a time). */
  private readonly applying = new Map<string, Promise<ApplyResult>>();

  /** Adds a flag; a second definition of the same name throws. */
  define(name: string, spec: ArgSpec, value: ArgValue, mutable: boolean): void {
    if (this.flags.has(name)) throw new Error(`flag '${name}' is already defined`);
    this.flags.set(name, { name, type: spec.type, desc: spec.desc, mutable, value });
    this.specs.set(name, spec);
  }

  has(name: string): boolean {
    return this.flags.has(name);
  }

  /** Removes a flag (its plugin was reloaded without it); its change listeners stay. */
  remove(name: string): boolean {
    this.specs.delete(name);
    return this.flags.delete(name);
  }

  /** A thread mirroring the main thread's values: the shared cell that moves on each change (`follow`). */
  private stamp: Int32Array | null = null;
  private seenStamp = 0;
  private refresh: () => void = () => undefined;

  /**
   * Makes every read of this (a worker's) registry first look at `stamp[0]`, a shared cell the
   * main thread moves once it has published a change, and call `refresh` (which loads the
   * published values) when it moved. A thread whose serve loop does not turn (an event still
   * awaiting on a retired thread, a handler resuming before the loop's next turn) then reads a
   * change as soon as the main thread answered it. A read costs one shared load.
   */
  follow(stamp: Int32Array, refresh: () => void): void {
    this.stamp = stamp;
    this.seenStamp = Atomics.load(stamp, 0);
    this.refresh = refresh;
  }

  /** The current value; throws for an unknown flag (a programming error). */
  get<T extends ArgValue = ArgValue>(name: string): T {
    if (this.stamp !== null) {
      const stamp = Atomics.load(this.stamp, 0);
      if (stamp !== this.seenStamp) {
        this.seenStamp = stamp;
        this.refresh();
      }
    }
    const flag = this.flags.get(name);
    if (!flag) throw new Error(`unknown flag '${name}'`);
    return flag.value as T;
  }

  info(name: string): FlagInfo | undefined {
    const f = this.flags.get(name);
    return f ? { ...f } : undefined;
  }

  /** Mutable flags in name order (what runtime configuration lists). */
  listMutable(): FlagInfo[] {
    return [...this.flags.values()].filter((f) => f.mutable).sort((a, b) => a.name.localeCompare(b.name)).map((f) => ({ ...f }));
  }

  /** Parses `text` by the flag's type and, if valid and mutable, applies it. */
  setFromText(name: string, text: string): SetResult {
    const parsed = this.parse(name, text);
    if (parsed.ok) this.apply(this.flags.get(name)!, parsed.value);
    return parsed;
  }

  /**
   * As `setFromText`, for a change that must have taken effect when it is answered: the flag's
   * applier (`setApplier`) runs first, and the flag takes the value only once it succeeded;
   * when it throws, the flag keeps its value and the error comes back.
   */
  async setFromTextApplied(name: string, text: string): Promise<ApplyResult> {
    const parsed = this.parse(name, text);
    if (!parsed.ok) return parsed;
    const applier = this.appliers.get(name);
    const flag = this.flags.get(name)!;
    if (applier === undefined) {
      this.apply(flag, parsed.value);
      return parsed;
    }
    // One change of a flag at a time, in the order asked: each is compared with the value the
    // one before it left (a resize back to the old size while a resize runs is not skipped).
    const run = (this.applying.get(name) ?? Promise.resolve()).then(async (): Promise<ApplyResult> => {
      if (parsed.value !== flag.value) {
        try {
          await applier(parsed.value, flag.value);
        } catch (error) {
          return { ok: false, reason: 'not_applied', value: parsed.value, error };
        }
      }
      this.apply(flag, parsed.value);
      return parsed;
    });
    this.applying.set(name, run);
    void run.then(() => {
      if (this.applying.get(name) === run) this.applying.delete(name);
    });
    return run;
  }

  /** Sets what puts a new value of `name` in effect for `setFromTextApplied`. */
  setApplier(name: string, fn: FlagApplier): void {
    this.appliers.set(name, fn);
  }

  private parse(name: string, text: string): SetResult {
    const flag = this.flags.get(name);
    if (!flag) return { ok: false, reason: 'unknown' };
    if (!flag.mutable) return { ok: false, reason: 'immutable' };
    const parsed = parseFlagValue(this.specs.get(name)!, text);
    return parsed.ok ? parsed : { ok: false, reason: 'invalid', problem: parsed.problem };
  }

  /** Sets a typed value (startup, tests and in-process callers); throws on a bad value. */
  set(name: string, value: ArgValue): void {
    const flag = this.flags.get(name);
    if (!flag) throw new Error(`unknown flag '${name}'`);
    const problem = checkValue(this.specs.get(name)!, value);
    if (problem) throw new TypeError(`flag ${name} ${problem}`);
    this.apply(flag, value);
  }

  /** Calls `fn` after `name` changes; '*' listens to every flag. Returns an unsubscribe function. */
  onChange(name: string, fn: FlagListener): () => void {
    const list = this.listeners.get(name) ?? [];
    list.push(fn);
    this.listeners.set(name, list);
    return () => {
      const l = this.listeners.get(name);
      if (l) l.splice(l.indexOf(fn), 1);
    };
  }

  /** Every value, by name. */
  snapshot(): Record<string, ArgValue> {
    const out: Record<string, ArgValue> = {};
    for (const f of this.flags.values()) out[f.name] = f.value;
    return out;
  }

  /** Overwrites values from a snapshot (workers mirroring the main thread). */
  load(values: Record<string, ArgValue>): void {
    for (const [name, value] of Object.entries(values)) {
      const f = this.flags.get(name);
      if (f && f.value !== value) this.apply(f, value);
    }
  }

  private apply(flag: FlagInfo, value: ArgValue): void {
    const previous = flag.value;
    flag.value = value;
    if (previous === value) return;
    for (const key of [flag.name, '*']) {
      for (const fn of this.listeners.get(key) ?? []) fn(flag.name, value, previous);
    }
  }
}

/** Text form of a value, as runtime configuration shows it. */
export function flagText(value: ArgValue): string {
  return Array.isArray(value) ? JSON.stringify(value) : String(value);
}

/**
 * The answer to a change (SPEC 4.2, without its line feed): the value stored, as GET shows it,
 * not the text sent (`007` sets 7), as gflags' SetCommandLineOption answers.
 */
export function setText(name: string, value: ArgValue): string {
  return `${name} set to ${flagText(value)}`;
}

/** The refusal of `text` (SPEC 4.2, without its line feed), then why when it is known. */
export function invalidText(name: string, text: string, problem: string | null): string {
  return `${text} is not a valid value for ${name}${problem ? `: ${name} ${problem}` : ''}`;
}

/** A parsed flag value, or why the text is refused (null: it is not of the flag's type at all). */
export type ParsedFlag = { ok: true; value: ArgValue } | { ok: false; problem: string | null };

// Numbers are decimal only, signed or not, with nothing around them: no hex (`0x10`), no white
// space, no `Infinity` or `NaN`. A double may have a fraction and an exponent; an integer not.
const INTEGER = /^[-+]?\d+$/;
const DECIMAL = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
const BOOL_NUMBER = /^[-+]?\d+(?:\.\d+)?$/;

/**
 * Parses a flag value from text (a runtime configuration PUT). Bools accept `true`/`false` and
 * numbers (non-zero is true, SPEC 4.2 rule 1). A double that would be ±Infinity, or 0 while the
 * text is not, is refused; -0 is 0. A string is taken as sent, but not with a NUL character
 * (C readers would see a shorter value) or white space at either end (a pasted value's stray
 * space, which would silently never match); the empty string is a value.
 */
export function parseFlagValue(spec: ArgSpec, text: string): ParsedFlag {
  let value: ArgValue;
  switch (spec.type) {
    case 'bool':
      if (text === 'true') return { ok: true, value: true };
      if (text === 'false') return { ok: true, value: false };
      if (!BOOL_NUMBER.test(text)) return { ok: false, problem: null };
      return { ok: true, value: Number(text) !== 0 };
    case 'int32':
    case 'uint64':
      if (!INTEGER.test(text)) return { ok: false, problem: null };
      value = Number(text) + 0; // -0 is 0
      break;
    case 'double': {
      if (!DECIMAL.test(text)) return { ok: false, problem: null };
      value = Number(text) + 0;
      if (!Number.isFinite(value)) return { ok: false, problem: `must be at most ${Number.MAX_VALUE} in magnitude (the largest double)` };
      // Only the digits before the exponent say whether the text names 0.
      if (value === 0 && /[1-9]/.test(text.split(/[eE]/)[0]!)) {
        return { ok: false, problem: `must be 0 or at least ${Number.MIN_VALUE} in magnitude (a double rounds anything smaller to 0)` };
      }
      break;
    }
    case 'string':
      if (text.includes('\0')) return { ok: false, problem: 'must not hold a NUL character' };
      if (/^\s|\s$/u.test(text)) return { ok: false, problem: 'must not start or end with white space' };
      value = text;
      break;
    case 'string_list':
      return { ok: false, problem: null };
  }
  const problem = checkValue(spec, value);
  return problem === null ? { ok: true, value } : { ok: false, problem };
}

/** As `parseFlagValue`, the value only: undefined for an invalid value. */
export function parseFlagText(spec: ArgSpec, text: string): ArgValue | undefined {
  const parsed = parseFlagValue(spec, text);
  return parsed.ok ? parsed.value : undefined;
}
