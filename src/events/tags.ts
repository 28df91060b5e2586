/**
 * Tag values and the rules that pick a tag when `invoke` is given none (SPEC 6.2).
 * Tags are integers below 2^53 so they cross the native boundary as plain numbers.
 */
import { randomFillSync } from 'node:crypto';
import { NULL_TAG, TIMER_TAG } from '../native.ts';
import type { EventKindName } from './types.ts';

export { NULL_TAG, TIMER_TAG };

const TAG_BASE = 2 ** 32;
const TAG_SPAN = 2 ** 53 - TAG_BASE;
const pool = new Uint32Array(512);
let poolIndex = pool.length;

/** A fresh random tag in [2^32, 2^53): unique for all practical purposes. */
export function randomTag(): number {
  if (poolIndex + 2 > pool.length) {
    randomFillSync(pool);
    poolIndex = 0;
  }
  const hi = pool[poolIndex++]! & 0x1fffff; // 21 bits
  const lo = pool[poolIndex++]!;
  return TAG_BASE + ((hi * 2 ** 32 + lo) % TAG_SPAN);
}

/**
 * A tag derived from a name: the same in every thread and every run, so plugins can
 * serialise access to shared state by name without passing tags around (SPEC 6.2.5).
 */
export function namedTag(name: string): number {
  // FNV-1a, 64-bit, folded into the tag range.
  let h = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(`gsf-tag:${name}`, 'utf8')) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return TAG_BASE + Number(h % BigInt(TAG_SPAN));
}

/** Whether `tag` is a value `invoke` accepts. */
export function isValidTag(tag: unknown): tag is number {
  return typeof tag === 'number' && Number.isSafeInteger(tag) && tag >= 0;
}

/** The running event, as far as tag rules care. */
export interface TagParent {
  tag: number;
  kind: EventKindName;
}

export interface TagSwitches {
  enable_inheriting_event_tag: boolean;
  enable_random_event_tag: boolean;
}

/**
 * The tag of a new event invoked without one (SPEC 6.2.4 and 6.4):
 * - inside an event, inherit its tag, except under timer and API-service handlers, whose
 *   derived events get random tags so they are not serialised;
 * - outside any event, a random tag;
 * - with inheriting off, a random tag, or the null tag when random tags are off too.
 */
export function resolveTag(parent: TagParent | null, switches: TagSwitches): number {
  if (!switches.enable_inheriting_event_tag) {
    return switches.enable_random_event_tag ? randomTag() : NULL_TAG;
  }
  if (parent === null || parent.kind === 'timer' || parent.kind === 'api') return randomTag();
  return parent.tag;
}
