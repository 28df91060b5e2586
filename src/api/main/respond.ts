/**
 * Writes an API answer to a uWebSockets.js response: the status line, headers, and the body
 * (JSON encoded here, before anything is written, so a body JSON cannot hold is a 500).
 */
import type uWS from 'uWebSockets.js';
import type { ApiResponse } from './router.ts';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 204: 'No Content', 304: 'Not Modified', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
  404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 413: 'Payload Too Large', 414: 'URI Too Long',
  422: 'Unprocessable Content', 429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

const STATUS_LINES = new Map<number, string>();

function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (line === undefined) {
    // RFC 9112 4: status-code SP [reason-phrase]: the space stays when there is no phrase.
    line = `${status} ${STATUS_TEXT[status] ?? ''}`;
    STATUS_LINES.set(status, line);
  }
  return line;
}

/**
 * Writes an answer. 204 and 304 never carry a body (nor a Content-Length); a HEAD answer
 * carries the GET answer's status and headers, Content-Length included, but no body.
 */
export function writeResponse(res: uWS.HttpResponse, r: ApiResponse, head = false): void {
  let body: string | Buffer | undefined;
  let contentType = r.contentType;
  let status = r.status;
  if (status !== 204 && status !== 304 && r.body !== undefined) {
    if (typeof r.body === 'string' || Buffer.isBuffer(r.body)) {
      body = r.body;
      contentType ??= 'text/plain; charset=utf-8';
    } else {
      contentType ??= 'application/json';
      // Encoded before anything is written: a body JSON cannot hold (a BigInt, a cycle) is a 500, not a crash.
      try {
        body = JSON.stringify(r.body);
      } catch (err) {
        status = 500;
        contentType = 'application/json';
        body = JSON.stringify({ error: 'GSF_ERR_INTERNAL', message: `internal error: the answer could not be encoded as JSON (${(err as Error).message})` });
      }
    }
  }
  res.writeStatus(statusLine(status));
  if (r.headers !== undefined) for (const k in r.headers) res.writeHeader(k, r.headers[k]!);
  if (status === 204 || status === 304) {
    res.endWithoutBody();
    return;
  }
  if (body === undefined) {
    if (head) {
      res.writeHeader('Content-Length', '0');
      res.endWithoutBody();
    } else {
      res.end();
    }
    return;
  }
  res.writeHeader('Content-Type', contentType!);
  if (!head) {
    res.end(body);
    return;
  }
  // uWS's endWithoutBody(length) leaves the response open in this version, so the length is
  // written as a header and the answer ends with no body.
  res.writeHeader('Content-Length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.length));
  res.endWithoutBody();
}
