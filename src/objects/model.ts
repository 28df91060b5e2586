/**
 * Declared types prepared for run time (field lookup, defaults, unique keys) and the object
 * codec: an object's fields are stored, cached and sent to the writer as one msgpack map.
 */
import { Packr } from 'msgpackr';
import { gsfError } from '../errors.ts';
import { unpackRange } from '../events/codec.ts';
import { checkValue, fromJsonDefault, ID_MAX, storableId, type FieldDef, type ObjectSchema, type TypeDef } from './schema.ts';

export { storableId };
import { storableText } from '../text.ts';

// Plain msgpack maps (no record structures): the bytes must decode the same in every
// process and after a restart.
const packr = new Packr({ useRecords: false, mapsAsObjects: true });

/** A value of one field as stored. */
export type FieldValue = unknown;
export type Fields = Record<string, FieldValue>;

export function encodeFields(fields: Fields): Uint8Array {
  return packr.pack(fields);
}

export function decodeFields(bytes: Uint8Array): Fields {
  return packr.unpack(bytes) as Fields;
}

/** The fields stored in `bytes[0, length)` (a reused buffer: no view is made of it). */
/**
 * The value of unique key `field` a stored object has: its own, else the field's declared
 * default (a field added after the object was stored reads its default), else null.
 */
export function storedKeyValue(type: TypeDef, field: string, data: Uint8Array): string | number | null {
  const fields = decodeFields(data);
  if (Object.prototype.hasOwnProperty.call(fields, field) && fields[field] !== undefined) return fields[field] as string | number | null;
  const declared = type.fields.find((f) => f.name === field)?.default;
  return declared === undefined || declared === null ? null : declared as string | number;
}

export function decodeFieldsIn(bytes: Uint8Array, length: number): Fields {
  return unpackRange(packr, bytes, 0, length) as Fields;
}

export interface FieldInfo extends FieldDef {
  /** Position of the field among the type's unique keys, or -1. */
  uniqueIndex: number;
  /** The default as a field value (undefined: none; required at create). */
  defaultValue: FieldValue;
}

/** One type as used at run time. */
export class TypeInfo {
  readonly name: string;
  readonly index: number;
  readonly file: string;
  readonly fields = new Map<string, FieldInfo>();
  /** Unique-key fields in declaration order. */
  readonly unique: FieldInfo[] = [];

  constructor(def: TypeDef) {
    this.name = def.name;
    this.index = def.index;
    this.file = def.file;
    for (const f of def.fields) {
      const info: FieldInfo = {
        ...f,
        uniqueIndex: def.unique.indexOf(f.name),
        defaultValue: f.default === undefined ? undefined : fromJsonDefault(f, f.default),
      };
      this.fields.set(f.name, info);
    }
    for (const name of def.unique) this.unique.push(this.fields.get(name)!);
  }

  /** The field, or a thrown error naming type and field. */
  field(name: string): FieldInfo {
    const f = this.fields.get(name);
    if (!f) throw gsfError('GSF_ERR_OBJECT_VALUE', `${this.name} has no field '${String(name)}' (fields: ${[...this.fields.keys()].join(', ')})`);
    return f;
  }

  /** Checks a value for a field (`lookup`: a value looked for, not stored); throws with type, field and reason. */
  check(f: FieldInfo, value: unknown, lookup = false): void {
    if (f.uniqueIndex >= 0 && f.type === 'string' && typeof value === 'string') {
      // Any text may be looked for: text no object can hold (a client's input, say) finds none.
      if (lookup) return;
      if (!storableKey(value)) {
        throw gsfError('GSF_ERR_OBJECT_VALUE', `${this.name}.${f.name} is a unique key: it must be text without NUL or unpaired surrogates, `
          + `got ${JSON.stringify(value)}`);
      }
      const bytes = Buffer.byteLength(value);
      if (bytes > UNIQUE_TEXT_MAX_BYTES) {
        throw gsfError('GSF_ERR_OBJECT_VALUE', `${this.name}.${f.name} is a unique key: it must be at most ${UNIQUE_TEXT_MAX_BYTES} bytes of UTF-8, `
          + `got ${bytes}`);
      }
    }
    const problem = checkValue(f, value);
    if (problem) throw gsfError('GSF_ERR_OBJECT_VALUE', `${this.name}.${f.name} ${problem}`);
  }

  /** A fresh copy of a field's default (arrays and maps are not shared between objects). */
  defaultOf(f: FieldInfo): FieldValue {
    const v = f.defaultValue;
    if (Array.isArray(v)) return [...v];
    if (v !== null && typeof v === 'object' && !(v instanceof Date)) return { ...v };
    return v;
  }

  /** The fields of a new object: given values checked, defaults filled, unknown and missing ones refused. */
  newFields(given: Record<string, unknown>): Fields {
    if (given === null || typeof given !== 'object') throw gsfError('GSF_ERR_OBJECT_VALUE', `create ${this.name}: fields must be an object`);
    for (const name of Object.keys(given)) this.field(name);
    const out: Fields = {};
    for (const f of this.fields.values()) {
      // Own fields only: a field named `constructor` or `toString` left out takes its default.
      const v = Object.prototype.hasOwnProperty.call(given, f.name) ? given[f.name] : undefined;
      if (v === undefined) {
        if (f.defaultValue === undefined) throw gsfError('GSF_ERR_OBJECT_VALUE', `create ${this.name}: field '${f.name}' is required (it has no default)`);
        out[f.name] = this.defaultOf(f);
      } else {
        this.check(f, v);
        out[f.name] = storedCopy(v);
      }
    }
    return out;
  }

  /** The unique-key values of a field set, in `unique` order (null when absent). */
  uniqueValues(fields: Fields): Array<string | number | null> {
    return this.unique.map((f) => {
      const v = fields[f.name];
      return (typeof v === 'function' ? null : v ?? null) as string | number | null; // a function: Object.prototype's
    });
  }
}

/** The declared types by name and by index. */
export class Model {
  readonly types: TypeInfo[];
  private readonly byName = new Map<string, TypeInfo>();

  constructor(schema: ObjectSchema) {
    this.types = schema.types.map((t) => new TypeInfo(t));
    for (const t of this.types) this.byName.set(t.name, t);
  }

  /** The type, or a thrown error listing the declared ones. */
  type(name: string): TypeInfo {
    const t = this.byName.get(name);
    if (!t) {
      const known = this.types.map((x) => x.name).join(', ') || 'none';
      throw gsfError('GSF_ERR_OBJECT_VALUE', `unknown object type '${String(name)}' (declared: ${known})`);
    }
    return t;
  }
}

/** A copy of a Date, or of an array's or a map's Dates. */
const dateCopy = (v: unknown): unknown => (v instanceof Date ? new Date(v.getTime()) : v);

/**
 * A checked field value as an object keeps it: arrays, maps and Dates are copied (their
 * Dates too), so that a caller changing its own value afterwards changes nothing unchecked.
 */
export function storedCopy(v: unknown): unknown {
  if (v instanceof Date) return new Date(v.getTime());
  if (Array.isArray(v)) return v.map(dateCopy);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  // Defined, not assigned: a key `__proto__` stays a key.
  for (const [k, el] of Object.entries(v)) Object.defineProperty(out, k, { value: dateCopy(el), enumerable: true, writable: true, configurable: true });
  return out;
}

/**
 * The longest text a unique key holds, in bytes of UTF-8: PostgreSQL's unique index takes at
 * most 2,704 bytes a row, and a key must be storable on either store alike.
 */
export const UNIQUE_TEXT_MAX_BYTES = 2048;

/**
 * True for a string a unique key may hold: no NUL and no unpaired surrogate (a database's text
 * column holds neither as given: PostgreSQL refuses NUL and turns lone surrogates into U+FFFD).
 */
export function storableKey(value: string): boolean {
  return storableText(value);
}


/** Checks an object id given by a caller. */
export function checkId(type: string, id: unknown): string {
  if (typeof id !== 'string' || !storableId(id)) {
    throw gsfError('GSF_ERR_OBJECT_VALUE', `${type} id must be a non-empty string of at most ${ID_MAX} characters without NUL or unpaired surrogates, got ${JSON.stringify(id)}`);
  }
  return id;
}
