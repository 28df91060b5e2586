/**
 * Route patterns of plugin REST routes: `/a/{param}/b`, with a final `{rest*}` allowed, and
 * when two patterns conflict: some path would match both, for the same method.
 */
import { gsfError } from '../errors.ts';

/** Methods a plugin route may take (HEAD is served by every GET route). */
export const ROUTE_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

/** Characters of a literal segment (RFC 3986 pchar without percent-escapes or sub-delims that confuse logs). */
const LITERAL = /^[A-Za-z0-9._~!$&'()*+,;=:@-]+$/;
const PARAM = /^\{([A-Za-z_][A-Za-z0-9_]*)(\*?)\}$/;

/** The segments of a pattern; throws `GSF_ERR_BAD_ARGUMENT` saying what is wrong. */
export function parsePattern(pattern: unknown, what: string): string[] {
  if (typeof pattern !== 'string' || !pattern.startsWith('/')) {
    throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: the path must be a string starting with '/', got ${JSON.stringify(pattern)}`);
  }
  const segments = pattern.split('/').filter((s, i, all) => !(s === '' && (i === 0 || i === all.length - 1)));
  if (segments.length === 0) throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: the path '${pattern}' names no resource`);
  const names = new Set<string>();
  segments.forEach((seg, i) => {
    const param = PARAM.exec(seg);
    if (param) {
      if (param[2] === '*' && i !== segments.length - 1) {
        throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: '${seg}' in '${pattern}' may only be the last segment`);
      }
      if (names.has(param[1]!)) throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: '${pattern}' names parameter '${param[1]}' twice`);
      names.add(param[1]!);
    } else if (!LITERAL.test(seg)) {
      throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: segment '${seg}' of '${pattern}' must be a {parameter} or plain URL characters`);
    } else if (seg === '.' || seg === '..') {
      // Clients remove dot segments before they send (RFC 3986 5.2.4): such a route would be another one.
      throw gsfError('GSF_ERR_BAD_ARGUMENT', `${what}: '${pattern}' has a '${seg}' segment, which clients remove before they send`);
    }
  });
  return segments;
}

/** Segments of a pattern that is known to be well formed (gsf's own). */
export function segmentsOf(pattern: string): string[] {
  return pattern.split('/').filter((s) => s !== '');
}

function isParam(seg: string): boolean {
  return seg.startsWith('{') && seg.endsWith('}');
}

function isRest(seg: string): boolean {
  return seg.endsWith('*}');
}

/** Whether some path matches both patterns (their segments). */
export function overlaps(a: readonly string[], b: readonly string[]): boolean {
  for (let i = 0; ; i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined) {
      // One ran out: they meet only if the other continues with a rest parameter, or both ended.
      if (x === undefined && y === undefined) return true;
      return false;
    }
    if (isRest(x) || isRest(y)) return true;
    if (isParam(x) || isParam(y)) continue;
    if (x !== y) return false;
  }
}

/** `METHOD /pattern` as messages write it. */
export function routeLabel(method: string, pattern: string): string {
  return `${method} ${pattern}`;
}
