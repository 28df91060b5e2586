/**
 * Reading console requests on the main thread: paging and search parameters, dates and JSON
 * bodies. Every problem is a 400 `GSF_ERR_BAD_REQUEST` whose message says what is wrong, and
 * the handler is not called.
 */
import { gsfError } from '../errors.ts';
import { shown } from '../text.ts';
import { queryParam, type ApiRequest } from '../api/main/router.ts';
import { jsonBody } from '../api/main/dispatch.ts';

/** Default `page_size` when a paged request gives none. */
export const DEFAULT_PAGE_SIZE = 20;

/** A bad request: 400 with the message. */
export function bad(message: string): Error {
  return gsfError('GSF_ERR_BAD_REQUEST', message);
}

/** Page info (SPEC 2.7): `page_no` from 0, `page_size` from 1 to the configured maximum. */
export function pageOf(req: ApiRequest, maxPageSize: number): { page_no: number; page_size: number } {
  const no = queryParam(req, 'page_no');
  const size = queryParam(req, 'page_size');
  const pageNo = no === null ? 0 : Number(no);
  const pageSize = size === null ? Math.min(DEFAULT_PAGE_SIZE, maxPageSize) : Number(size);
  if (no !== null && (!/^\d+$/.test(no) || !Number.isSafeInteger(pageNo))) {
    throw bad(`page_no must be an integer >= 0 (got '${no}')`);
  }
  if (size !== null && (!/^\d+$/.test(size) || pageSize < 1 || pageSize > maxPageSize)) {
    throw bad(`page_size must be an integer from 1 to ${maxPageSize} (got '${size}')`);
  }
  return { page_no: pageNo, page_size: pageSize };
}

/** A query parameter that must be given. */
export function requiredQuery(req: ApiRequest, name: string): string {
  const v = queryParam(req, name);
  if (v === null || v === '') throw bad(`query parameter '${name}' is required`);
  return v;
}

/** A query parameter that must be one of `allowed` (required unless `optional`). */
export function oneOfQuery(req: ApiRequest, name: string, allowed: readonly string[], optional = false): string | null {
  const v = queryParam(req, name);
  if ((v === null || v === '') && optional) return null;
  if (v === null || !allowed.includes(v)) throw bad(`query parameter '${name}' must be one of ${allowed.join(', ')} (got ${v === null ? 'none' : `'${v}'`})`);
  return v;
}

/** A `YYYY-MM-DD` date (UTC) that exists in the calendar. */
export function dateQuery(req: ApiRequest, name: string): string {
  const v = requiredQuery(req, name);
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  const d = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  if (!d || d.toISOString().slice(0, 10) !== v) throw bad(`query parameter '${name}' must be a date YYYY-MM-DD (got '${v}')`);
  return v;
}

/** The request body as a JSON object. */
export function bodyObject(req: ApiRequest): Record<string, unknown> {
  const body = jsonBody(req);
  if (body === undefined) throw bad('request body is required: a JSON object');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** Typed fields of a JSON object, each a 400 naming the field when wrong. */
export class Fields {
  constructor(private readonly obj: Record<string, unknown>, private readonly where = '') {}

  private name(field: string): string {
    return `'${this.where}${field}'`;
  }

  string(field: string, optional = false): string {
    const v = this.obj[field];
    if (v === undefined && optional) return '';
    if (typeof v !== 'string') throw bad(`${this.name(field)} must be a string`);
    return v;
  }

  nonEmpty(field: string): string {
    const v = this.string(field);
    if (v === '') throw bad(`${this.name(field)} must not be empty`);
    return v;
  }

  integer(field: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.obj[field];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
      throw bad(max === Number.MAX_SAFE_INTEGER ? `${this.name(field)} must be an integer >= ${min}` : `${this.name(field)} must be an integer from ${min} to ${max}`);
    }
    return v;
  }

  oneOf(field: string, allowed: readonly string[]): string {
    const v = this.obj[field];
    if (typeof v !== 'string' || !allowed.includes(v)) throw bad(`${this.name(field)} must be one of ${allowed.join(', ')}`);
    return v;
  }

  strings(field: string): string[] {
    const v = this.obj[field];
    if (!Array.isArray(v) || v.length === 0 || v.some((x) => typeof x !== 'string' || x === '')) {
      throw bad(`${this.name(field)} must be a non-empty array of non-empty strings`);
    }
    return v as string[];
  }

  /** A non-empty array of objects, each read by `read`. */
  objects<T>(field: string, read: (f: Fields) => T): T[] {
    const v = this.obj[field];
    if (!Array.isArray(v) || v.length === 0) throw bad(`${this.name(field)} must be a non-empty array of objects`);
    return v.map((item, i) => {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) throw bad(`'${this.where}${field}[${i}]' must be an object`);
      return read(new Fields(item as Record<string, unknown>, `${this.where}${field}[${i}].`));
    });
  }

  /** An ISO-8601 date or date-time string naming a real day and time (no 2030-02-30, no 24:00). */
  dateTime(field: string): string {
    const v = this.string(field);
    const m = /^(\d{4})-(\d{2})-(\d{2})(T(\d{2}):(\d{2})(:(\d{2})(\.\d+)?)?(Z|[+-](\d{2}):(\d{2}))?)?$/.exec(v);
    const day = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
    const valid = m !== null && day !== null && day.getUTCFullYear() === Number(m[1]) && day.getUTCMonth() === Number(m[2]) - 1 &&
      day.getUTCDate() === Number(m[3]) && Number(m[5] ?? 0) < 24 && Number(m[6] ?? 0) < 60 && Number(m[8] ?? 0) < 60 &&
      Number(m[11] ?? 0) < 24 && Number(m[12] ?? 0) < 60 && !Number.isNaN(Date.parse(v));
    if (!valid) throw bad(`${this.name(field)} must be an ISO-8601 date or date-time (got '${shown(v)}')`);
    return v;
  }
}
