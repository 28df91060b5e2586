/**
 * One object inside a transaction: its fields as fetched, with the changes made so far.
 * A class (methods on the prototype), because fetching makes one per object.
 */
import { gsfError } from '../errors.ts';
import { storedCopy, type Fields, type TypeInfo } from './model.ts';

export const ObjectState = { clean: 0, created: 1, changed: 2, deleted: 3 } as const;
export type ObjectStateValue = (typeof ObjectState)[keyof typeof ObjectState];

/** What a handle needs from its transaction. */
export interface HandleOwner {
  /** Throws unless the transaction still takes changes (the message names `what subject.field`). */
  assertOpen(what: string, subject?: unknown, field?: unknown): void;
  markDirty(): void;
}

export class ObjectHandle {
  state: ObjectStateValue;
  /** Checked at commit even when unchanged. */
  forWrite: boolean;
  /** A unique-key field was set: the commit rewrites the keys. */
  keysChanged = false;
  /** The fields as fetched, with this event's changes (read them; change them through `own`). */
  data: Fields;
  /**
   * `data` is the thread's decoded copy of a cached object, shared with other events that read
   * the same stored bytes: the first change copies it.
   */
  private shared: boolean;

  constructor(
    readonly owner: HandleOwner,
    readonly info: TypeInfo,
    readonly id: string,
    readonly version: number,
    data: Fields,
    state: ObjectStateValue,
    forWrite: boolean,
    shared = false,
  ) {
    this.data = data;
    this.state = state;
    this.forWrite = forWrite;
    this.shared = shared;
  }

  /**
   * `data`, this handle's own (copied first if shared). Dates are copied with it: `get` hands
   * out an own copy's values as they are, and a Date can be changed in place (frozen arrays and
   * maps cannot).
   */
  private own(): Fields {
    if (this.shared) {
      const copy: Fields = {};
      for (const k in this.data) {
        const v = this.data[k];
        copy[k] = v instanceof Date ? new Date(v.getTime()) : v;
      }
      this.data = copy;
      this.shared = false;
    }
    return this.data;
  }

  get type(): string {
    return this.info.name;
  }

  get(field: string): unknown {
    if (this.state === ObjectState.deleted) throw gsfError('GSF_ERR_OBJECT_STATE', `${this.info.name} '${this.id}' was deleted in this event`);
    let v = this.data[field];
    // Own properties only: an inherited name (`constructor`, `__proto__`) is a field of the
    // declaration or of none, never Object.prototype's value.
    if (v === undefined || !Object.hasOwn(this.data, field)) {
      // A field added to the declaration after this object was stored: its default.
      const f = this.info.field(field);
      v = this.own()[field] = this.info.defaultOf(f);
    }
    if (typeof v === 'object' && v !== null) {
      // A Date can be changed in place: a shared one is handed out as a copy.
      if (v instanceof Date) return this.shared ? new Date(v.getTime()) : v;
      // Arrays and maps are frozen: a change must go through set() to be committed.
      if (!Object.isFrozen(v)) Object.freeze(v);
    }
    return v;
  }

  set(field: string, value: unknown): void {
    this.owner.assertOpen('set', this.info.name, field);
    if (this.state === ObjectState.deleted) throw gsfError('GSF_ERR_OBJECT_STATE', `${this.info.name} '${this.id}' was deleted in this event`);
    const f = this.info.field(field);
    this.info.check(f, value);
    if (this.data[field] === value && (typeof value !== 'object' || value === null)) return;
    this.own()[field] = storedCopy(value);
    if (f.uniqueIndex >= 0) this.keysChanged = true;
    if (this.state === ObjectState.clean) this.state = ObjectState.changed;
    this.owner.markDirty();
  }

  /** Every declared field (defaults for ones stored before they existed), plus the id. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { id: this.id };
    for (const name of this.info.fields.keys()) out[name] = this.get(name);
    return out;
  }
}
