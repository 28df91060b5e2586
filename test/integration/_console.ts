/** Helpers for operations-console tests: the arena with both console halves, players, HTTP. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type GsfServer } from '../../src/index.ts';
import { GsfClient } from '../../src/sdk/index.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { arenaPlugins, type Game } from './_arena-games.ts';
import { TEST_IO_THREADS } from './_server.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ARENA = path.join(root, 'plugins', 'arena');
export const ARENA_NATIVE = path.join(root, 'plugins', 'arena-console-native');

export interface ConsoleServer {
  server: GsfServer;
  dir: string;
  logs(): string[];
  /** A client logged in as `name` (hello). */
  player(name: string): Promise<GsfClient>;
  connect(codec?: 'json' | 'msgpack'): Promise<GsfClient>;
  call(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: unknown; text: string; headers: Headers }>;
  stop(): Promise<void>;
}

/**
 * Starts the arena with both console halves; `managed` picks which half serves. With `game`
 * 'native' the game is the C++ one (plugins/arena-native) and only the C console half is loaded.
 */
export async function startConsoleServer(managed: boolean | null, extra: Record<string, Record<string, unknown>> = {},
  game: Game = 'managed'): Promise<ConsoleServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-console-'));
  const logFile = path.join(dir, 'server.log');
  const components: Record<string, Record<string, unknown>> = {
    ApiService: { api_service_port: 0, ...extra.ApiService },
    SessionService: { websocket_address: '127.0.0.1', websocket_port: 0, io_threads_size: TEST_IO_THREADS },
    Logging: { log_file: logFile },
    ...(managed === null ? {} : { DeployApiService: { deploy_api_service_use_managed: managed, ...extra.DeployApiService } }),
    // One event thread unless the test asks for more (as startTestServer).
    EventDispatcher: { event_threads_size: 1, ...extra.EventDispatcher },
  };
  const server = await startServer({
    dir,
    manifest: { components: Object.entries(components).map(([name, args]) => ({ name, arguments: args })), plugins: game === 'managed' ? [ARENA, ARENA_NATIVE] : arenaPlugins(game) },
  });
  const url = `ws://127.0.0.1:${activeSessions!.listener.port}`;
  const connect = (codec: 'json' | 'msgpack' = 'json'): Promise<GsfClient> => GsfClient.connect({ url, version: '1.0.0', codec });
  return {
    server, dir,
    logs: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean) : []),
    connect,
    async player(name) {
      const c = await connect();
      const hello = await c.request('hello', { name });
      if ((hello as { name?: string }).name !== name) throw new Error(`hello ${name}: ${JSON.stringify(hello)}`);
      return c;
    },
    async call(method, url, body, headers = {}) {
      const r = await fetch(`http://127.0.0.1:${server.api.port}${url}`, {
        method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await r.text();
      return { status: r.status, text, headers: r.headers, body: text === '' ? undefined : JSON.parse(text) as unknown };
    },
    stop: () => server.stop(),
  };
}

/** `{error, message}` of an error answer. */
export const failure = (error: string, message: string): unknown => ({ error, message });
