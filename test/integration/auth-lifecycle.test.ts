/**
 * The authenticator agent and its client across lifecycle events: a callback-form login in
 * flight when the game server stops gets its callback in the drain; the agent answers what it
 * has in flight when it is stopped, and restarts on its port at once; a platform that breaks
 * off its answer is an unexpected answer (5), not unreachable (3).
 */
import test from 'ava';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { authenticationRequest, type AuthenticationRequest } from '../../src/index.ts';
import type { LcAsk, LcRecord } from '../fixtures/plugins/probe-authlc-plugin/index.ts';
import { fixtures, startTestServer, waitFor, type Components, type TestServer } from './_server.ts';
import { post, startAgentProcess, type AgentProcess } from './_auth.ts';
import { holdPort } from './_ports.ts';

const PLUGIN = path.join(fixtures, 'plugins', 'probe-authlc-plugin');
const ok = { success: true, reason_code: 0, reason_description: '' };

/**
 * An agent stand-in: `player_id` says how it answers. `hang`: never; `delay-N`: after N ms;
 * anything else at once. A well-formed answer carries the player id as its description, so an
 * answer that reached the wrong request shows.
 */
interface Stand {
  port: number;
  seen: string[];
  close(): Promise<void>;
}

async function startStand(port = 0): Promise<Stand> {
  const seen: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => { body += d.toString(); });
    req.on('end', () => {
      const id = (JSON.parse(body) as { player_id: string }).player_id;
      seen.push(id);
      if (id === 'hang') return;
      const answer = (): void => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result: 0, description: id }));
      };
      const m = /^delay-(\d+)/.exec(id);
      if (!m) {
        answer();
        return;
      }
      const t = setTimeout(() => { timers.delete(t); answer(); }, Number(m[1]));
      timers.add(t);
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () => new Promise<void>((r) => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

/**
 * A socialnet platform stand-in for `/debug_token`; `input_token` says how it answers:
 * `ok:USER:MS` valid for USER after MS ms; `html`, `empty`, `s500`; `never` (no answer at all);
 * `stall` (headers, then nothing); `cut` (headers and half a body, then the connection closes).
 */
interface Platform {
  url: string;
  calls: string[];
  close(): Promise<void>;
}

async function startPlatform(): Promise<Platform> {
  const calls: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const token = url.searchParams.get('input_token') ?? '';
    calls.push(token);
    const json = (status: number, text: string, type = 'application/json'): void => {
      if (!res.destroyed) res.writeHead(status, { 'content-type': type }).end(text);
    };
    const m = /^ok:([^:]+):(\d+)$/.exec(token);
    if (m) {
      const t = setTimeout(() => {
        timers.delete(t);
        json(200, JSON.stringify({ data: { app_id: '1001', is_valid: true, user_id: m[1] } }));
      }, Number(m[2]));
      timers.add(t);
      return;
    }
    if (token === 'html') return json(200, '<!DOCTYPE html><html><body>Service Unavailable</body></html>', 'text/html');
    if (token === 'empty') return json(200, '');
    if (token === 's500') return json(500, '{"error":"internal"}');
    if (token === 'never') return;
    if (token === 'stall') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"data":');
      return;
    }
    if (token === 'cut') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"data":', () => res.destroy());
      return;
    }
    json(404, '{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((r) => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

const platformArgs = (p: Platform, timeoutMs = 1000): Record<string, unknown> => ({
  socialnet_base_url: p.url, socialnet_app_id: '1001', socialnet_app_secret: 's', socialnet_request_timeout_in_ms: timeoutMs,
});

function startServerWith(port: number, timeoutMs: number, extra: Components = {}): Promise<TestServer> {
  return startTestServer({
    EventDispatcher: { event_threads_size: 2, ...extra.EventDispatcher },
    AuthenticationClient: { use_authenticator: true, remote_authenticator_port: port, authenticator_request_timeout_in_ms: timeoutMs },
  }, [PLUGIN]);
}

let n = 0;
const records = (file: string): LcRecord[] =>
  (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as LcRecord) : []);

/** Invokes `probe_authlc.ask` and returns the file its answer goes to. */
function askFile(srv: TestServer, form: LcAsk['form'], request: AuthenticationRequest): string {
  const label = `lc-${++n}`;
  const file = path.join(srv.dir, `${label}.jsonl`);
  srv.server.invoke('probe_authlc.ask', { file, label, form, request } satisfies LcAsk);
  return file;
}

const testReq = (id: string): AuthenticationRequest => authenticationRequest('test', id);

// ---- the game server stops with logins in flight ----------------------------------------

test.serial('a callback-form login in flight when the server stops gets its callback during the drain', async (t) => {
  const stand = await startStand();
  const srv = await startServerWith(stand.port, 3000, { EventDispatcher: { shutdown_drain_timeout_in_ms: 5000 } });
  try {
    const file = askFile(srv, 'callback', testReq('delay-600'));
    await waitFor(() => stand.seen.includes('delay-600'), 20000, 'the agent saw the request');
    await srv.stop();
    const got = records(file);
    t.deepEqual(got.map((r) => [r.label, r.response, r.error]), [[path.basename(file, '.jsonl'), { ...ok, reason_description: 'delay-600' }, false]]);
  } finally {
    await srv.stop();
    await stand.close();
  }
});

// ---- the agent stops, restarts ----------------------------------------------------------

test.serial('the agent stopped by SIGTERM answers the platform check it had in flight, then exits 0', async (t) => {
  const platform = await startPlatform();
  const agent = await startAgentProcess(platformArgs(platform, 3000));
  try {
    const answer = post(`${agent.url}/v1/authentication/socialnet`, { player_id: '100', access_token: 'ok:100:500' })
      .then((a) => ({ status: a.status, body: a.body }), (err: Error & { cause?: { code?: string } }) => ({ failed: err.cause?.code ?? err.message }));
    await waitFor(() => platform.calls.includes('ok:100:500'), 20000, 'the platform call');
    const code = await agent.stop();
    const got = await answer;
    t.deepEqual({ code, got }, { code: 0, got: { status: 200, body: { result: 0, description: '' } } });
  } finally {
    await agent.stop();
    await platform.close();
  }
});

test.serial('the agent restarts on its port at once after a stop that had kept-alive clients', async (t) => {
  // A fixed port, as an operator's (uWebSockets.js sets SO_REUSEADDR on those, not on port 0's).
  // It is let go before the agent binds it: another test may take it meanwhile, then another is tried.
  let agent: AgentProcess | null = null;
  for (let attempt = 1; agent === null; attempt++) {
    const held = await holdPort();
    held.release();
    agent = await startAgentProcess({ port: held.port }).catch((err: Error) => {
      if (attempt === 3 || !err.message.includes('EADDRINUSE')) throw err;
      return null;
    });
  }
  const port = agent.port;
  try {
    // fetch keeps the connection alive, as the AuthenticationClient's does.
    t.deepEqual((await post(`${agent.url}/v1/authentication/test`, { player_id: 'x' })).body, { result: 0, description: '' });
    t.is(await agent.stop(), 0);
    agent = null;
    const restarted = await startAgentProcess({ port }).then((a: AgentProcess) => { agent = a; return 'listening'; }, (err: Error) => err.message);
    t.is(restarted, 'listening');
  } finally {
    await agent?.stop();
  }
});

// ---- a platform that breaks off its answer ----------------------------------------------

test.serial('a platform that answers 200 and breaks off the body is an unexpected platform answer (5), not unreachable (3)', async (t) => {
  const platform = await startPlatform();
  const agent = await startAgentProcess(platformArgs(platform, 1500));
  try {
    const a = await post(`${agent.url}/v1/authentication/socialnet`, { player_id: '100', access_token: 'cut' });
    t.is(platform.calls.filter((c) => c === 'cut').length, 1);
    t.deepEqual(a.body, { result: 5, description: 'socialnet /debug_token answered HTTP 200 and broke off its body (UND_ERR_SOCKET)' });
  } finally {
    await agent.stop();
    await platform.close();
  }
});

