/**
 * The authenticator agent (`gsf authenticator`): an HTTP listener on uWebSockets.js serving the
 * endpoints of SPEC 4.1. Every endpoint answers 200 with a JSON `result`; other paths answer
 * 404, other methods 405, bodies over `max_body_bytes` 413, each with a JSON error body.
 */
import uWS from 'uWebSockets.js';
import { listenUws } from '../../api/main/listen.ts';
import path from 'node:path';
import { createLogger, type Logger } from '../../log/logger.ts';
import { openManifestLog } from '../../log/log-file.ts';
import { ManifestError } from '../../config/manifest.ts';
import { describeError } from '../../errors.ts';
import { errorBody } from '../../api/main/router.ts';
import type { AgentConfig } from './agent-config.ts';
import { AuthService } from './service.ts';
import { SocialnetAdapter } from './socialnet.ts';
import { MicroblogAdapter } from './microblog.ts';
import type { AgentAnswer } from '../types.ts';

export interface RunningAgent {
  /** The bound port (also when 0 was asked). */
  readonly port: number;
  readonly address: string;
  readonly log: Logger;
  /** Stops listening; requests already taken are still answered. */
  close(): void;
  /** Requests taken and not yet answered. */
  inFlight(): number;
  /** How long a stop waits for the requests in flight: the longest platform request timeout, and a second. */
  readonly drainMs: number;
}

/** Logger of the agent, from its manifest's `Logging` component (fixed for the run). */
export function agentLogger(config: AgentConfig): Logger {
  const l = config.logging;
  const file = l.log_file ? path.resolve(config.dir, l.log_file as string) : '';
  const problem = openManifestLog(file, config.file, l.log_file);
  if (problem !== null) throw new ManifestError(problem);
  return createLogger({ get: (name) => l[name] }, {
    file,
    format: l.log_format as 'text' | 'json',
  });
}

/** JSON of the shared, frozen answers (success, empty friend list), made once. */
const frozenJson = new WeakMap<AgentAnswer, string>();

function answerJson(answer: AgentAnswer): string {
  if (!Object.isFrozen(answer)) return JSON.stringify(answer);
  let text = frozenJson.get(answer);
  if (text === undefined) {
    text = JSON.stringify(answer);
    frozenJson.set(answer, text);
  }
  return text;
}

/** The hot path: 200 with an endpoint's answer. */
function sendAnswer(res: uWS.HttpResponse, answer: AgentAnswer): void {
  const text = answerJson(answer);
  res.cork(() => {
    res.writeStatus('200 OK');
    res.writeHeader('Content-Type', 'application/json');
    res.end(text);
  });
}

/**
 * Writes a JSON answer. To HEAD (`head`), the status and headers only, Content-Length that of
 * the body: a keep-alive client reads no body there, and one sent would be taken for the next answer.
 */
function sendJson(res: uWS.HttpResponse, status: string, body: unknown, headers: Record<string, string> = {}, head = false): void {
  res.cork(() => {
    res.writeStatus(status);
    for (const [k, v] of Object.entries(headers)) res.writeHeader(k, v);
    res.writeHeader('Content-Type', 'application/json');
    const text = JSON.stringify(body);
    if (!head) {
      res.end(text);
      return;
    }
    // endWithoutBody(length) leaves the response open in this uWS version: the length goes in a header.
    res.writeHeader('Content-Length', String(Buffer.byteLength(text)));
    res.endWithoutBody();
  });
}

/** Starts the agent's listener. */
export async function startAgent(config: AgentConfig, log = agentLogger(config)): Promise<RunningAgent> {
  const a = config.authenticator;
  const service = new AuthService({
    adapters: {
      socialnet: new SocialnetAdapter({
        baseUrl: a.socialnet_base_url, appId: a.socialnet_app_id, appSecret: a.socialnet_app_secret,
        timeoutMs: a.socialnet_request_timeout_in_ms, maxPages: a.friend_list_max_pages,
      }),
      microblog: new MicroblogAdapter({
        baseUrl: a.microblog_base_url, consumerKey: a.microblog_consumer_key, consumerSecret: a.microblog_consumer_secret,
        timeoutMs: a.microblog_request_timeout_in_ms, maxPages: a.friend_list_max_pages,
      }),
    },
    cacheTtlMs: a.cache_ttl_in_sec * 1000,
    cacheMaxEntries: a.cache_max_entries,
    maxConcurrent: a.max_concurrent_platform_requests,
    maxWaiting: a.max_waiting_platform_requests,
    log,
  });
  const limit = a.max_body_bytes;
  const app = uWS.App();
  let inFlight = 0;

  const serve = (endpoint: string) => (res: uWS.HttpResponse, req: uWS.HttpRequest): void => {
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    const reply = (answer: AgentAnswer): void => {
      if (!aborted) sendAnswer(res, answer);
    };
    const tooBig = (): void => {
      if (!aborted) sendJson(res, '413 Payload Too Large', errorBody('GSF_ERR_BODY_TOO_LARGE', `request body exceeds ${limit} bytes`));
    };
    if (Number(req.getHeader('content-length') || '0') > limit) {
      tooBig();
      return;
    }
    let body: Buffer | null = null;
    let rejected = false;
    res.onData((chunk, isLast) => {
      if (rejected) return;
      // The chunk is only valid during this call: copy it.
      const piece = Buffer.from(chunk.slice(0));
      body = body === null ? piece : Buffer.concat([body, piece]);
      if (body.length > limit) {
        rejected = true;
        tooBig();
        return;
      }
      if (!isLast) return;
      let answer: AgentAnswer | Promise<AgentAnswer>;
      try {
        answer = service.handle(endpoint, body);
      } catch (err) {
        answer = Promise.reject(err);
      }
      if (!(answer instanceof Promise)) {
        reply(answer);
        return;
      }
      inFlight++;
      answer.then(reply, (err: unknown) => {
        log.error(`GSF_ERR_INTERNAL: POST ${endpoint} failed: ${describeError(err)}`);
        if (!aborted) sendJson(res, '500 Internal Server Error', errorBody('GSF_ERR_INTERNAL', `internal error: ${describeError(err)}`));
      }).finally(() => { inFlight--; });
    });
  };

  for (const endpoint of service.endpoints.keys()) {
    app.post(endpoint, serve(endpoint));
    app.any(endpoint, (res, req) => {
      const method = req.getMethod().toUpperCase();
      sendJson(res, '405 Method Not Allowed',
        errorBody('GSF_ERR_METHOD_NOT_ALLOWED', `method ${method} not allowed for ${endpoint}`, { allowed: ['POST'] }),
        { Allow: 'POST' }, method === 'HEAD');
    });
  }
  app.any('/*', (res, req) => {
    const method = req.getMethod().toUpperCase();
    sendJson(res, '404 Not Found', errorBody('GSF_ERR_NOT_FOUND', `no route for ${method} ${req.getUrl()}`), {}, method === 'HEAD');
  });

  const listening = await listenUws(app, a.address, a.port, 'Authenticator');
  return {
    port: listening.port, address: a.address, log, close: listening.close,
    inFlight: () => inFlight,
    drainMs: Math.max(a.socialnet_request_timeout_in_ms, a.microblog_request_timeout_in_ms) + 1000,
  };
}
