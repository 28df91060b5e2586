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
  if (n >= CHILD_KEYS) return intern(`${parent.name}_#${n}`);
  const key = parent.nameId * CHILD_KEYS + n;
  let id = childNames.get(key);
  if (id === undefined) {
    id = intern(`${parent.name}_#${n}`);
    childNames.set(key, id);
  }
  return id;
}
