/**
 * MANIFEST.json loading and validation (iFun Engine form):
 * `{"components": [{"name": "EventDispatcher", "arguments": {...}}], "plugins": [...]}`.
 * Every problem stops the start with a TypeError naming the file, the component and the argument.
 */
import fs from 'node:fs';
import path from 'node:path';
import { COMPONENTS, SERVICES, type ArgSpec, type ComponentSchema } from './schema.ts';
import { parseJsonText } from './json-text.ts';

export type ArgValue = boolean | number | string | string[];
export type ComponentArgs = Record<string, ArgValue>;

export interface Manifest {
  /** The manifest path as shown in messages. */
  file: string;
  /** Directory the manifest's relative paths resolve against. */
  dir: string;
  /** Every known component with its arguments (defaults filled in). */
  components: Record<string, ComponentArgs>;
  /** Components the manifest listed; a service component (`SERVICES`) runs only when listed. */
  listed: Set<string>;
  /** Plugin entries as written, or null to load every folder under `<dir>/plugins`. */
  plugins: string[] | null;
}

/** A manifest error: a TypeError with code GSF_ERR_MANIFEST. */
export class ManifestError extends TypeError {
  readonly code = 'GSF_ERR_MANIFEST';
  constructor(message: string) {
    super(message);
    this.name = 'TypeError';
  }
}

/** A manifest is a small JSON file: one larger than this (a device, a log named by mistake) is refused. */
const MAX_MANIFEST_BYTES = 16 << 20;

/**
 * The file's text, read in pieces (a pipe or a device has no size to ask for first); null when
 * it holds more than `limit` bytes.
 */
function readAtMost(file: string, limit: number): string | null {
  const fd = fs.openSync(file, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1 << 20, limit + 1 - total));
      const n = fs.readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > limit) return null;
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Reads a manifest file's JSON; `shown` is its path as messages name it (the full path, so a
 * log line says which manifest wherever it is read), `dir` its folder.
 */
export function readManifestJson(file: string): { json: unknown; shown: string; dir: string } {
  const shown = path.resolve(file);
  let text: string | null;
  try {
    text = readAtMost(file, MAX_MANIFEST_BYTES);
  } catch (err) {
    throw new ManifestError(`${shown}: cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  if (text === null) throw new ManifestError(`${shown}: is larger than ${MAX_MANIFEST_BYTES / (1 << 20)} MiB, which no manifest is (is it the right file?)`);
  try {
    return { json: parseJsonText(text), shown, dir: path.dirname(path.resolve(file)) };
  } catch (err) {
    throw new ManifestError(`${shown}: is not valid JSON (${(err as Error).message})`);
  }
}

/** Reads and validates a manifest file. */
export function loadManifest(file: string): Manifest {
  const { json, shown, dir } = readManifestJson(file);
  return parseManifest(json, shown, dir);
}

/** Validates an already parsed manifest object. */
export function parseManifest(json: unknown, shown: string, dir: string): Manifest {
  if (!isPlainObject(json)) throw new ManifestError(`${shown}: must be a JSON object with "components"`);
  for (const key of Object.keys(json)) {
    if (key !== 'components' && key !== 'plugins') {
      throw new ManifestError(`${shown}: unknown top-level key "${key}" (allowed: components, plugins)`);
    }
  }
  const { components, listed } = parseComponentList(json.components, shown, COMPONENTS);
  for (const service of listed) {
    for (const needed of SERVICES[service] ?? []) {
      if (!listed.has(needed)) throw new ManifestError(`${shown}: ${service} needs the ${needed} component; list ${needed} as well`);
    }
  }

  let plugins: string[] | null = null;
  if (json.plugins !== undefined) {
    if (!Array.isArray(json.plugins) || json.plugins.some((p) => typeof p !== 'string' || p === '')) {
      throw new ManifestError(`${shown}: "plugins" must be an array of plugin names or paths`);
    }
    plugins = json.plugins as string[];
  }
  return { file: shown, dir, components, listed, plugins };
}

/**
 * Validates a `components` list against `schemas`: every known component gets its defaults,
 * listed arguments replace them; unknown names, duplicates and bad values throw.
 */
export function parseComponentList(list: unknown, shown: string, schemas: Record<string, ComponentSchema>):
{ components: Record<string, ComponentArgs>; listed: Set<string> } {
  const components: Record<string, ComponentArgs> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    components[name] = Object.fromEntries(Object.entries(schema)
      .map(([k, spec]) => [k, Array.isArray(spec.default) ? [...spec.default] : spec.default])) as ComponentArgs;
  }
  const listed = new Set<string>();
  const entries = list ?? [];
  if (!Array.isArray(entries)) throw new ManifestError(`${shown}: "components" must be an array`);
  entries.forEach((entry, index) => {
    if (!isPlainObject(entry) || typeof entry.name !== 'string') {
      throw new ManifestError(`${shown}: components[${index}] must be an object with a string "name"`);
    }
    const name = entry.name;
    // Own keys only: a name such as "constructor" is no component.
    const schema = Object.hasOwn(schemas, name) ? schemas[name] : undefined;
    if (!schema) {
      throw new ManifestError(`${shown}: unknown component "${name}" (known: ${Object.keys(schemas).join(', ')})`);
    }
    if (listed.has(name)) throw new ManifestError(`${shown}: component ${name} is listed twice`);
    listed.add(name);
    for (const key of Object.keys(entry)) {
      if (key !== 'name' && key !== 'arguments') {
        throw new ManifestError(`${shown}: ${name}: unknown key "${key}" (allowed: name, arguments)`);
      }
    }
    const args = entry.arguments ?? {};
    if (!isPlainObject(args)) throw new ManifestError(`${shown}: ${name}.arguments must be an object`);
    const target = components[name]!;
    for (const [arg, value] of Object.entries(args)) {
      const spec = Object.hasOwn(schema, arg) ? schema[arg] : undefined;
      if (!spec) {
        throw new ManifestError(`${shown}: ${name}.${arg} is not an argument of ${name} (known: ${Object.keys(schema).join(', ')})`);
      }
      const problem = checkValue(spec, value);
      if (problem) throw new ManifestError(`${shown}: ${name}.${arg} ${problem}`);
      target[arg] = value as ArgValue;
    }
  });
  return { components, listed };
}

/**
 * Why a token cannot work, or null. Requests carry it in a header, whose surrounding white space
 * HTTP drops: a token of white space would refuse every request (empty is the way to turn it off).
 */
export function secretProblem(value: string): string | null {
  if (value !== '' && value.trim() === '') {
    return 'must not be white space only: no request could present it, so every one would get 401 (leave it empty to turn authentication off)';
  }
  if (value !== value.trim()) return 'must not start or end with white space: HTTP drops it from the Authorization header, so no request would match';
  const other = /[^\x20-\x7e]/u.exec(value);
  if (other !== null) {
    const code = other[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    return `must hold printable ASCII characters only (it holds U+${code}): an Authorization header cannot carry others as typed, so no request could present it`;
  }
  return null;
}

/** Returns why `value` does not fit `spec`, or null when it does. */
export function checkValue(spec: ArgSpec, value: unknown): string | null {
  switch (spec.type) {
    case 'bool':
      return typeof value === 'boolean' ? null : 'must be a boolean (true or false)';
    case 'uint64':
    case 'int32': {
      const min = spec.type === 'uint64' ? Math.max(0, spec.min ?? 0) : spec.min;
      const max = spec.max;
      const ok = typeof value === 'number' && Number.isSafeInteger(value) && (min === undefined || value >= min)
        && (max === undefined || value <= max)
        && (spec.type !== 'int32' || (value >= -2147483648 && value <= 2147483647));
      if (ok) return null;
      const integer = typeof value === 'number' && Number.isSafeInteger(value);
      const whole = typeof value === 'number' && Number.isInteger(value);
      if (whole && max !== undefined && value > max) return `must be at most ${max}${spec.maxReason ? ` (${spec.maxReason})` : ''}`;
      // Past 2^53 - 1 an integer is not exact as a number: that ceiling is the reason, not the sign.
      if (spec.type === 'uint64' && whole && !integer && value > 0) return `must be at most ${Number.MAX_SAFE_INTEGER} (2^53 - 1: larger integers are not exact)`;
      if (spec.type === 'int32') {
        if (whole && (value < -2147483648 || value > 2147483647)) return 'must be a 32-bit integer';
        if (min !== undefined && max !== undefined) return `must be an integer from ${min} to ${max}`;
        return min === undefined ? 'must be a 32-bit integer' : `must be an integer >= ${min}`;
      }
      return min === 1 ? 'must be a positive integer' : min ? `must be an integer >= ${min}` : 'must be a non-negative integer';
    }
    case 'double':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a number';
    case 'string':
      if (typeof value !== 'string') return 'must be a string';
      if (spec.oneOf && !spec.oneOf.includes(value)) return `must be one of ${spec.oneOf.map((v) => `"${v}"`).join(', ')}`;
      if (spec.address === true && (value === '' || /\s/.test(value))) {
        return 'must be a host name or an IP address without white space (0.0.0.0 for every interface)';
      }
      return spec.secret === true ? secretProblem(value) : null;
    case 'string_list':
      // An empty entry names no version and no flag.
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) return 'must be an array of strings';
      return value.includes('') ? `must be an array of non-empty strings (entry ${value.indexOf('')} is empty)` : null;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A manifest with every default, as if the file listed nothing. */
export function emptyManifest(dir = process.cwd()): Manifest {
  return parseManifest({ components: [] }, '(defaults)', dir);
}
