/**
 * Names and ids on each thread: interned names (process-wide ids, cached per thread), the ids of
 * default child names, and the ids of held invokes, reserved in blocks.
 */
import { native } from '../native.ts';

const internCache = new Map<string, number>();
const nameCache = new Map<number, string>();

/** The string of an interned id, cached per thread. */
export function nameOf(id: number): string {
  let name = nameCache.get(id);
  if (name === undefined) {
    name = native.nameOf(id);
    nameCache.set(id, name);
  }
  return name;
}

/** Process-wide id of a name, cached per thread. */
export function intern(name: string): number {
  let id = internCache.get(name);
  if (id === undefined) {
    id = native.intern(name);
    internCache.set(name, id);
  }
  return id;
}

/** The longest name an event may be given, in UTF-8 bytes (MAX_EVENT_NAME_BYTES in native/core/name_table.h). */
export const MAX_EVENT_NAME_BYTES = 256;
/** Distinct names events may be given before further ones share `(other event names)` (kMaxEventNames). */
export const MAX_EVENT_NAMES = 10000;

const eventNameCache = new Map<string, number>();

/**
 * Process-wide id of a name an event is given (an invoke's name, `setEventName`, a timer's name,
 * a default child name): names from data are bounded in number, so past MAX_EVENT_NAMES new ones
 * share one id; cached per thread up to that many.
 */
export function internEventName(name: string): number {
  let id = eventNameCache.get(name);
  if (id === undefined) {
    id = native.internEventName(name);
    if (eventNameCache.size < MAX_EVENT_NAMES) eventNameCache.set(name, id);
  }
  return id;
}

/** Whether `name` is too long to be an event's name. */
export function eventNameTooLong(name: string): boolean {
  // Three bytes per UTF-16 unit at most: most names need no count.
  return name.length * 3 > MAX_EVENT_NAME_BYTES && Buffer.byteLength(name, 'utf8') > MAX_EVENT_NAME_BYTES;
}

/** Ids reserved at once for held invokes (one native call and one touch of the shared counter per block). */
const HELD_ID_BLOCK = 256;
let heldNextId = 0;
let heldEndId = 0;

/** An id for an event a running event invokes and holds: from this thread's reserved block. */
export function reserveHeldId(): number {
  if (heldNextId === heldEndId) {
    heldNextId = native.reserveEventId(HELD_ID_BLOCK);
    heldEndId = heldNextId + HELD_ID_BLOCK;
  }
  return heldNextId++;
}

/** Children per parent name whose name ids are kept by `childNameId`. */
const CHILD_KEYS = 4096;
/** Name ids of `{parent}_#{n}` names, by `parent name id * CHILD_KEYS + n`. */
const childNames = new Map<number, number>();

/**
 * The name id of `parent`'s next child, `{parent}_#{n}` (SPEC's default name). A chain's names
 * grow with it, so the string is built and hashed only the first time that parent name has an
 * n-th child on this thread.
 */
export function childNameId(parent: { name: string; nameId: number; children: number }): number {
  const n = ++parent.children;
  if (n >= CHILD_KEYS) return childId(parent, n);
  const key = parent.nameId * CHILD_KEYS + n;
  let id = childNames.get(key);
  if (id === undefined) {
    id = childId(parent, n);
    if (childNames.size < MAX_CHILD_KEYS) childNames.set(key, id);
  }
  return id;
}

/** Child names kept by `childNameId` (a bound on the cache, not on the names). */
const MAX_CHILD_KEYS = 65536;

/** `{parent}_#{n}`, or the parent's own name once that would be too long (a chain that keeps creating events). */
function childId(parent: { name: string; nameId: number }, n: number): number {
  const name = `${parent.name}_#${n}`;
  return eventNameTooLong(name) ? parent.nameId : internEventName(name);
}
