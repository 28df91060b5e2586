/**
 * The baseline servers of bench/sessions, each run as its own process as gsf is:
 *   node --import tsx bench/session-baselines.ts uws|uws-hop|ws
 * prints `port=N` once listening on 127.0.0.1 and exits on SIGTERM.
 * - uws: a raw uWebSockets.js echo (no decoding, no events, no threads);
 * - uws-hop: the same echo with one round trip through a worker thread per frame
 *   (bench/session-hop-baseline.ts), for the light-load part;
 * - ws: a `ws` server running the benchmark's handler inline (decode, handler, encode on one
 *   thread): JSON text frames, or msgpack binary frames as gsf's msgpack sessions carry.
 */
import uWS from 'uWebSockets.js';
import { WebSocketServer } from 'ws';
import { Packr } from 'msgpackr';
import { echo } from './plugins/sessions/index.ts';
import { uwsHopEcho } from './session-hop-baseline.ts';

function uwsEcho(): Promise<number> {
  return new Promise((resolve, reject) => {
    const app = uWS.App().ws('/*', { message: (ws, message, isBinary) => { ws.send(message, isBinary); } });
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('uWS echo: cannot listen'));
      resolve(uWS.us_socket_local_port(socket));
    });
  });
}

const packr = new Packr({ useRecords: false });

function wsServer(): Promise<number> {
  return new Promise((resolve) => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false }, () => {
      resolve((wss.address() as { port: number }).port);
    });
    wss.on('connection', (ws) => {
      ws.on('message', (data, isBinary) => {
        if (isBinary) {
          const envelope = packr.unpack(data as Buffer) as { type: string; body: unknown };
          ws.send(packr.pack({ type: envelope.type, body: echo(envelope.body) }), { binary: true });
          return;
        }
        const envelope = JSON.parse(String(data)) as { type: string; body: unknown; id?: number };
        ws.send(JSON.stringify({ type: envelope.type, body: echo(envelope.body) }));
      });
    });
  });
}

const kind = process.argv[2];
if (kind !== 'uws' && kind !== 'uws-hop' && kind !== 'ws') {
  process.stderr.write('usage: session-baselines.ts uws|uws-hop|ws\n');
  process.exit(2);
}
const port = await (kind === 'uws' ? uwsEcho() : kind === 'uws-hop' ? uwsHopEcho() : wsServer());
process.on('SIGTERM', () => process.exit(0));
process.stdout.write(`port=${port}\n`);
