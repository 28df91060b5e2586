/**
 * Object type declarations: JSON files in `objects/` next to the manifest and in each plugin's
 * folder. Loading checks every file, type and field and names them in each error.
 *
 * ```json
 * { "Account": { "fields": { "name": "string", "coins": { "type": "integer", "default": 0 } },
 *                "unique": ["name"] } }
 * ```
 */
import fs from 'node:fs';
import path from 'node:path';
import { gsfError } from '../errors.ts';
import { hasLoneSurrogate, storableText } from '../text.ts';
import { parseJsonText, repeatedKey } from '../config/json-text.ts';

export const SCALAR_TYPES = ['string', 'integer', 'double', 'bool', 'datetime'] as const;
export type ScalarType = (typeof SCALAR_TYPES)[number];
export type FieldKind = ScalarType | 'ref' | 'array' | 'map';
/** Element type of an array or map: a scalar or a reference. */
export type ElementKind = ScalarType | 'ref';

/** A JSON value that can be stored as a declared default. */
export type JsonDefault = string | number | boolean | null | JsonDefault[] | { [k: string]: JsonDefault };

export interface FieldDef {
  name: string;
  type: FieldKind;
  /** Element type of arrays and maps. */
  of?: ElementKind;
  /** Referenced type of `ref` fields and of arrays and maps of refs. */
  to?: string;
  /** The declared default (JSON); a field without one must be given at create. */
  default?: JsonDefault;
}

export interface TypeDef {
  name: string;
  /** Position in the schema: the type's number in the native cache. */
  index: number;
  /** The file that declares it (as shown in messages). */
  file: string;
  fields: FieldDef[];
  /** Fields whose values are unique across objects of the type (lookup keys). */
  unique: string[];
}

export interface ObjectSchema {
  types: TypeDef[];
}

const NAME = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
const FIELD_KEYS = new Set(['type', 'of', 'to', 'default']);
const UNIQUE_TYPES: ReadonlySet<FieldKind> = new Set(['string', 'integer']);

function bad(file: string, where: string, problem: string): Error {
  return gsfError('GSF_ERR_OBJECT_SCHEMA', `${file}: ${where}${problem}`);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A plugin's folder: the folder of its module, or for a native library built into
 * `<folder>/build/` the folder holding its gsf-plugin.json.
 */
export function pluginFolder(file: string): string {
  const dir = path.dirname(file);
  if (/\.(so|dylib|dll)$/.test(file) && path.basename(dir) === 'build' && fs.existsSync(path.join(dir, '..', 'gsf-plugin.json'))) {
    return path.dirname(dir);
  }
  return dir;
}

/** The `objects/` folders a manifest's object types may be declared in: next to it, and in each of its plugins. */
export function objectFolders(manifestDir: string, pluginFiles: readonly string[]): string[] {
  const dirs = [path.join(manifestDir, 'objects')];
  for (const file of pluginFiles) {
    const dir = path.join(pluginFolder(file), 'objects');
    if (!dirs.includes(dir)) dirs.push(dir);
  }
  return dirs;
}

/** The object-declaration files of a manifest folder and its plugins' folders, in load order. */
export function declarationFiles(manifestDir: string, pluginFiles: readonly string[]): string[] {
  const files: string[] = [];
  for (const dir of objectFolders(manifestDir, pluginFiles)) {
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) continue;
    for (const name of fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) files.push(path.join(dir, name));
  }
  return files;
}

function shown(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/** Reads and checks declaration files; types get indexes in file order. */
export function loadSchema(files: readonly string[]): ObjectSchema {
  const types: TypeDef[] = [];
  const owners = new Map<string, string>();
  for (const file of files) {
    const label = shown(file);
    let json: unknown;
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
      json = parseJsonText(text);
    } catch (err) {
      throw bad(label, '', `is not valid JSON (${(err as Error).message})`);
    }
    // A type or field given twice in one file (a merge gone wrong): JSON keeps the last silently.
    const repeated = repeatedKey(text);
    if (repeated !== null) {
      const { key, path: at } = repeated;
      if (at.length === 0) throw bad(label, `type ${key}: `, 'is declared twice in this file');
      if (at.length === 2 && at[1] === 'fields') throw bad(label, `type ${at[0]}: field ${key}: `, 'is declared twice');
      throw bad(label, `type ${at[0]}: `, `gives ${JSON.stringify(key)} twice in ${at.slice(1).map((k) => JSON.stringify(k)).join('.')}`);
    }
    if (!isPlainObject(json)) throw bad(label, '', 'must be a JSON object of type declarations');
    for (const [name, decl] of Object.entries(json)) {
      const previous = owners.get(name);
      if (previous !== undefined) throw bad(label, `type ${name}: `, `is already declared in ${previous}`);
      owners.set(name, label);
      types.push(parseType(label, name, decl, types.length));
    }
  }
  const names = new Set(types.map((t) => t.name));
  for (const t of types) {
    for (const f of t.fields) {
      if (f.to !== undefined && !names.has(f.to)) throw bad(t.file, `type ${t.name}: field ${f.name}: `, `refers to unknown type '${f.to}'`);
    }
  }
  checkStorageNames(types);
  return { types };
}

/** PostgreSQL cuts longer identifiers to this many bytes (two names could then become one). */
const MAX_IDENTIFIER = 63;

/**
 * Each type is stored in table `obj_<type>`, and each unique key in column `u_<field>` with
 * index `obj_<type>_u_<field>` (storage.ts). Those names must be distinct in the database:
 * compared without case (SQLite's rule), and at most 63 characters (PostgreSQL's limit).
 */
function checkStorageNames(types: readonly TypeDef[]): void {
  const taken = new Map<string, string>();
  const claim = (t: TypeDef, name: string, what: string): void => {
    const where = `type ${t.name}: `;
    if (name.length > MAX_IDENTIFIER) {
      throw bad(t.file, where, `${what} would be named "${name}", longer than ${MAX_IDENTIFIER} characters (PostgreSQL's limit): shorten the type or field name`);
    }
    const other = taken.get(name.toLowerCase());
    if (other !== undefined) {
      throw bad(t.file, where, `${what} would be named "${name}", as ${other} (database names are compared without case): rename one of them`);
    }
    taken.set(name.toLowerCase(), `${what} of type ${t.name}`);
  };
  for (const t of types) {
    claim(t, `obj_${t.name}`, 'its table');
    const columns = new Map<string, string>();
    for (const u of t.unique) {
      claim(t, `obj_${t.name}_u_${u}`, `the index of unique key '${u}'`);
      const same = columns.get(u.toLowerCase());
      if (same !== undefined) throw bad(t.file, `type ${t.name}: `, `unique keys '${same}' and '${u}' differ only in case (their database columns would not)`);
      columns.set(u.toLowerCase(), u);
    }
  }
}

/** Checks one type declaration. */
export function parseType(file: string, name: string, decl: unknown, index: number): TypeDef {
  const where = `type ${name}: `;
  if (!NAME.test(name)) throw bad(file, where, 'type names start with a letter and hold letters, digits and _ (at most 63)');
  if (!isPlainObject(decl)) throw bad(file, where, 'must be an object with "fields"');
  for (const key of Object.keys(decl)) {
    if (key !== 'fields' && key !== 'unique') throw bad(file, where, `unknown key "${key}" (allowed: fields, unique)`);
  }
  if (!isPlainObject(decl.fields) || Object.keys(decl.fields).length === 0) throw bad(file, where, '"fields" must be an object with at least one field');
  const fields = Object.entries(decl.fields).map(([fname, spec]) => parseField(file, name, fname, spec));
  const unique = decl.unique ?? [];
  if (!Array.isArray(unique) || unique.some((u) => typeof u !== 'string')) throw bad(file, where, '"unique" must be an array of field names');
  for (const u of unique as string[]) {
    const f = fields.find((x) => x.name === u);
    if (!f) throw bad(file, where, `unique key '${u}' is not a field`);
    if (!UNIQUE_TYPES.has(f.type)) throw bad(file, `${where}field ${u}: `, 'unique keys must be string or integer fields');
  }
  if (new Set(unique as string[]).size !== (unique as string[]).length) throw bad(file, where, '"unique" lists a field twice');
  return { name, index, file, fields, unique: unique as string[] };
}

function parseField(file: string, type: string, name: string, spec: unknown): FieldDef {
  const where = `type ${type}: field ${name}: `;
  if (!NAME.test(name) || name === 'id') throw bad(file, where, name === 'id' ? "'id' is reserved for the object's id" : 'field names start with a letter and hold letters, digits and _');
  const s = typeof spec === 'string' ? { type: spec } : spec;
  if (!isPlainObject(s)) throw bad(file, where, 'must be a type name or an object with "type"');
  for (const key of Object.keys(s)) if (!FIELD_KEYS.has(key)) throw bad(file, where, `unknown key "${key}" (allowed: type, of, to, default)`);
  const kinds: readonly string[] = [...SCALAR_TYPES, 'ref', 'array', 'map'];
  if (typeof s.type !== 'string' || !kinds.includes(s.type)) throw bad(file, where, `type must be one of ${kinds.join(', ')}`);
  const field: FieldDef = { name, type: s.type as FieldKind };
  if (field.type === 'array' || field.type === 'map') {
    const elements: readonly string[] = [...SCALAR_TYPES, 'ref'];
    if (typeof s.of !== 'string' || !elements.includes(s.of)) throw bad(file, where, `"of" (element type) must be one of ${elements.join(', ')}`);
    field.of = s.of as ElementKind;
  } else if (s.of !== undefined) {
    throw bad(file, where, '"of" is only for array and map fields');
  }
  if (field.type === 'ref' || field.of === 'ref') {
    if (typeof s.to !== 'string' || s.to === '') throw bad(file, where, '"to" must name the referenced type');
    field.to = s.to;
  } else if (s.to !== undefined) {
    throw bad(file, where, '"to" is only for references');
  }
  if (s.default !== undefined) {
    const problem = checkValue(field, fromJsonDefault(field, s.default as JsonDefault));
    if (problem) throw bad(file, where, `default ${problem}`);
    field.default = s.default as JsonDefault;
  }
  return field;
}

/**
 * An ISO-8601 date (and time) as a Date; an invalid Date for text that is not one, or that names
 * a day the month does not have: Date would take 2030-02-30 as March 2nd.
 */
function isoDate(text: string): Date {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:$|T)/.exec(text);
  const date = new Date(text);
  if (m === null || Number.isNaN(date.getTime())) return new Date(NaN);
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= days ? date : new Date(NaN);
}

/** The field's value for a declared JSON default (datetimes are ISO-8601 strings in JSON). */
export function fromJsonDefault(field: FieldDef, value: JsonDefault): unknown {
  const el = field.type === 'array' || field.type === 'map' ? field.of : field.type;
  if (el !== 'datetime') return value;
  const toDate = (v: JsonDefault): unknown => (typeof v === 'string' ? isoDate(v) : v);
  if (field.type === 'array') return Array.isArray(value) ? value.map(toDate) : value;
  if (field.type === 'map') return isPlainObject(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toDate(v)])) : value;
  return toDate(value);
}

/** The longest object id, in UTF-16 units. */
export const ID_MAX = 255;

/** True for a string an object may have as its id: non-empty, at most ID_MAX characters, no NUL or unpaired surrogate. */
export function storableId(id: string): boolean {
  return id !== '' && id.length <= ID_MAX && storableText(id);
}

function checkElement(kind: ElementKind, v: unknown): string | null {
  switch (kind) {
    case 'string':
      if (typeof v !== 'string') return 'must be a string';
      // A store keeps text as UTF-8: such a unit would read back as U+FFFD.
      return hasLoneSurrogate(v) ? `must be text without unpaired UTF-16 surrogates (no UTF-8 form), got ${JSON.stringify(v)}` : null;
    case 'integer': return Number.isSafeInteger(v) ? null : 'must be an integer';
    case 'double': return typeof v === 'number' && Number.isFinite(v) ? null : 'must be a finite number';
    case 'bool': return typeof v === 'boolean' ? null : 'must be true or false';
    case 'datetime': return v instanceof Date && !Number.isNaN(v.getTime()) ? null : 'must be a valid Date';
    // What no object can have as its id would name none (and text with no UTF-8 form would not
    // read back as it was set).
    case 'ref': return v === null || (typeof v === 'string' && storableId(v)) ? null
      : `must be an object id (a non-empty string of at most ${ID_MAX} characters without NUL or unpaired surrogates) or null, got ${JSON.stringify(v)}`;
  }
}

/** Why `value` does not fit `field`, or null when it does. */
export function checkValue(field: FieldDef, value: unknown): string | null {
  if (field.type === 'array') {
    if (!Array.isArray(value)) return 'must be an array';
    for (let i = 0; i < value.length; i++) {
      const p = checkElement(field.of!, value[i]);
      if (p) return `[${i}] ${p}`;
    }
    return null;
  }
  if (field.type === 'map') {
    if (!isPlainObject(value) || value instanceof Date) return 'must be an object (string keys)';
    for (const [k, v] of Object.entries(value)) {
      // Decoding renames that key (a guard against prototype pollution): it would not read back.
      if (k === '__proto__') return "may not have the key '__proto__'";
      // Two such keys would be one once stored as UTF-8.
      if (hasLoneSurrogate(k)) return `may not have a key with an unpaired UTF-16 surrogate (no UTF-8 form), got ${JSON.stringify(k)}`;
      const p = checkElement(field.of!, v);
      if (p) return `[${JSON.stringify(k)}] ${p}`;
    }
    return null;
  }
  return checkElement(field.type, value);
}

/** Field definitions compare equal in what they store (type, element type, target). */
export function sameStorage(a: FieldDef, b: FieldDef): boolean {
  return a.type === b.type && a.of === b.of && a.to === b.to;
}

/** How a field is written in messages: `integer`, `array of string`, `ref to Character`. */
export function describeField(f: FieldDef): string {
  const el = f.of === 'ref' ? `ref to ${f.to}` : f.of;
  if (f.type === 'array' || f.type === 'map') return `${f.type} of ${el}`;
  return f.type === 'ref' ? `ref to ${f.to}` : f.type;
}
