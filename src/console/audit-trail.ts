/**
 * The console's audit trail of changes: every `/cs-api/v1/` request other than GET and HEAD
 * (refused ones included) as one entry — when, who, what (method and path), the answer's
 * status and how long it took; never a body. The trail keeps the newest `AUDIT_TRAIL_SIZE`
 * entries of this server in memory and serves them at `GET /cs-api/v1/audit/`, paged, newest
 * first; the durable record is the `cs-api audit:` log line each request also writes.
 *
 * "Who" is the operator name the caller gives in the `X-Gsf-Operator` header (percent-encoded
 * UTF-8, as the console page sends it): the API has one shared token, so the name is the
 * caller's word, not an identity gsf checked.
 */
import { gsfError } from '../errors.ts';
import type { ApiRequest, ApiResponse } from '../api/main/router.ts';
import { pageOf } from './requests.ts';

/** Entries kept. */
export const AUDIT_TRAIL_SIZE = 1000;
/** The header naming the operator. */
export const OPERATOR_HEADER = 'x-gsf-operator';
/** Longest operator name, in characters once decoded. */
export const MAX_OPERATOR_LENGTH = 64;

export interface AuditEntry {
  /** ISO-8601, UTC, when the answer was written. */
  time: string;
  /** The `X-Gsf-Operator` name; empty when none was given. */
  operator: string;
  method: string;
  path: string;
  status: number;
  duration_in_ms: number;
}

/** Requests that change something, and so enter the trail. */
export function isChange(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD';
}

/**
 * The operator a request names: its `X-Gsf-Operator` header, percent-decoded and trimmed; ''
 * without one. A name that does not decode, holds a control character or is longer than
 * `MAX_OPERATOR_LENGTH` is a 400, before any handler runs.
 */
export function operatorOf(req: ApiRequest): string {
  return operatorName(req.header(OPERATOR_HEADER));
}

/** `operatorOf` for the header's raw value. */
export function operatorName(raw: string): string {
  if (raw === '') return '';
  let name: string;
  try {
    name = decodeURIComponent(raw).trim();
  } catch {
    throw gsfError('GSF_ERR_BAD_REQUEST', "header 'X-Gsf-Operator' must be percent-encoded UTF-8");
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) throw gsfError('GSF_ERR_BAD_REQUEST', "header 'X-Gsf-Operator' must not hold control characters");
  if ([...name].length > MAX_OPERATOR_LENGTH) {
    throw gsfError('GSF_ERR_BAD_REQUEST', `header 'X-Gsf-Operator' must be at most ${MAX_OPERATOR_LENGTH} characters`);
  }
  return name;
}

/** The newest `capacity` changes, in a ring. */
export class AuditTrail {
  private readonly ring: AuditEntry[] = [];
  /** Where the next entry goes once the ring is full. */
  private next = 0;

  constructor(private readonly capacity = AUDIT_TRAIL_SIZE) {}

  record(operator: string, method: string, path: string, status: number, durationMs: number): void {
    const entry: AuditEntry = {
      time: new Date().toISOString(), operator, method, path, status, duration_in_ms: Math.round(durationMs * 1000) / 1000,
    };
    if (this.ring.length < this.capacity) {
      this.ring.push(entry);
    } else {
      this.ring[this.next] = entry;
      this.next = (this.next + 1) % this.capacity;
    }
  }

  /** Entries kept. */
  get size(): number {
    return this.ring.length;
  }

  /** Page `pageNo` of `pageSize` entries, newest first. */
  page(pageNo: number, pageSize: number): AuditEntry[] {
    const out: AuditEntry[] = [];
    const n = this.ring.length;
    // The newest entry sits just before `next` (the end of the array until the ring is full).
    const newest = n < this.capacity ? n - 1 : (this.next - 1 + n) % n;
    for (let i = pageNo * pageSize; i < Math.min(n, (pageNo + 1) * pageSize); i++) out.push(this.ring[(newest - i + n) % n]!);
    return out;
  }
}

/** `GET /cs-api/v1/audit/?page_no=&page_size=`: `{total, entries}`, newest first. */
export function auditRoute(trail: AuditTrail, maxPageSize: number): (req: ApiRequest) => ApiResponse {
  return (req) => {
    const { page_no, page_size } = pageOf(req, maxPageSize);
    return { status: 200, body: { total: trail.size, entries: trail.page(page_no, page_size) } };
  };
}
