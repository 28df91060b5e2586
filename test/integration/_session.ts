/** Helpers for session tests: a server with a SessionService on port 0 and SDK clients. */
import WebSocket from 'ws';
import { GsfClient, type CodecName } from '../../src/sdk/index.ts';
import { activeSessions } from '../../src/session/main/feature.ts';
import { startTestServer, type Components, type TestServer } from './_server.ts';

export interface SessionServer extends TestServer {
  wsPort: number;
  url: string;
  connect(codec?: CodecName, version?: string): Promise<GsfClient>;
}

/** Starts a server with the session-probe plugin and a SessionService on port 0. */
export async function startSessionServer(components: Components = {}, plugins = ['session-probe']): Promise<SessionServer> {
  const merged: Components = { ...components, SessionService: { websocket_address: '127.0.0.1', websocket_port: 0, ...components.SessionService } };
  const s = await startTestServer(merged, plugins);
  const wsPort = activeSessions!.listener.port;
  const url = `ws://127.0.0.1:${wsPort}`;
  return {
    ...s, wsPort, url,
    connect: (codec = 'json', version = '1.0.0') => GsfClient.connect({ url, version, codec }),
  };
}

/** The API-service base URL of a running test server. */
export function apiUrl(s: TestServer): string {
  return `http://127.0.0.1:${s.server.api.port}`;
}

/** A frame a raw JSON client got: an envelope, its body as the server sent it. */
export interface RawEnvelope { type: string; body?: unknown; id?: number }

/** A raw `ws` JSON client of `url` (no SDK), with every frame it gets parsed, in order, in `got`. */
export async function openRawJson(url: string): Promise<{ ws: WebSocket; got: RawEnvelope[] }> {
  const ws = new WebSocket(`${url}/?version=1.0.0&codec=json`);
  const got: RawEnvelope[] = [];
  ws.on('message', (data: Buffer) => got.push(JSON.parse(data.toString()) as RawEnvelope));
  await new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
  return { ws, got };
}
