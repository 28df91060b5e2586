/*
 * The console page's calls to /cs-api/v1/: the API token and the operator's name are kept for
 * this browser tab (sessionStorage) and sent with every call. Plain browser JavaScript, served
 * as is.
 */
/* global sessionStorage */

export const V1 = '/cs-api/v1';
const TOKEN_KEY = 'gsf-console-token';
const OPERATOR_KEY = 'gsf-console-operator';
const PRINTABLE = /^[\x20-\x7e]+$/;

export const session = {
  get token() { return sessionStorage.getItem(TOKEN_KEY) ?? ''; },
  set token(t) {
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    else sessionStorage.removeItem(TOKEN_KEY);
  },
  get operator() { return sessionStorage.getItem(OPERATOR_KEY) ?? ''; },
  set operator(name) { sessionStorage.setItem(OPERATOR_KEY, name); },
};

/** Choices the serving side declares, read at start: editable fields and mission categories. */
export const choices = { editable: { account: [], character: [] }, missions: { normal: [], achievement: [] } };

/** Thrown for an answer that is not 2xx: `message` is the API's own, as it words it. */
export class ApiError extends Error {
  constructor(status, body) {
    const api = body && typeof body === 'object' && typeof body.message === 'string';
    super(api ? body.message : `HTTP ${status}${typeof body === 'string' && body ? `: ${body}` : ''}`);
    this.status = status;
    this.code = api && typeof body.error === 'string' ? body.error : '';
  }
}

/** Listeners told when the API answers 401 (the page asks for the token again). */
const unauthorized = [];
export const onUnauthorized = (fn) => unauthorized.push(fn);

/** A path under /cs-api/v1/ with each segment encoded. */
export function path(...segments) {
  return `${V1}/${segments.map((s) => encodeURIComponent(String(s))).join('/')}/`;
}

/**
 * Calls the API; resolves to the answer's body (undefined for 204), rejects with an ApiError.
 * `body` is sent as JSON unless it is a string (sent as it is: the API judges it).
 */
export async function call(method, url, body) {
  const headers = {};
  // A token an HTTP header cannot carry as typed (beyond printable ASCII) is not sent: the API
  // then answers as it does a wrong token, and the page asks for the token again.
  if (session.token && PRINTABLE.test(session.token)) headers.Authorization = `Bearer ${session.token}`;
  if (session.operator && method !== 'GET') headers['X-Gsf-Operator'] = encodeURIComponent(session.operator);
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(url, {
    method, headers, cache: 'no-store',
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed;
  if (text !== '') {
    try { parsed = JSON.parse(text); } catch { parsed = text; }
  }
  if (res.ok) return parsed;
  const err = new ApiError(res.status, parsed);
  if (res.status === 401) for (const fn of unauthorized) fn(err);
  throw err;
}

export const get = (url) => call('GET', url);
