// HTTP/1.1 load generator (a worker thread): keep-alive connections, each with a fixed number of
// pipelined GETs in flight; every response seen sends one more request. Only `200` answers count
// as served; the others are counted apart. Plain JavaScript so it loads in a worker without a
// TypeScript loader.
import net from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

const MARK = 'HTTP/1.1 ';
const OK = 'HTTP/1.1 200 ';

function countOf(text, mark) {
  let n = 0;
  for (let i = text.indexOf(mark); i >= 0; i = text.indexOf(mark, i + mark.length)) n++;
  return n;
}

function run(o) {
  const extra = Object.entries(o.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  // With `paths`, each connection walks the list from its own place, one path per request.
  const requests = (o.paths ?? [o.path]).map((p) => `GET ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`);
  let responses = 0;
  let ok = 0;
  let running = true;
  const sockets = [];
  const start = performance.now();
  return new Promise((resolve) => {
    for (let c = 0; c < o.connections; c++) {
      const socket = net.connect(o.port, '127.0.0.1');
      let next = c;
      const more = (n) => {
        let text = '';
        for (let i = 0; i < n; i++) text += requests[next++ % requests.length];
        return text;
      };
      socket.setNoDelay(true);
      // A status line may straddle two chunks: each count keeps the end of the last chunk, one
      // character short of its mark, so no mark is counted twice.
      let tailAny = '';
      let tailOk = '';
      socket.on('connect', () => socket.write(more(o.depth)));
      socket.on('data', (chunk) => {
        const text = chunk.toString('latin1');
        const any = tailAny + text;
        const okText = tailOk + text;
        const n = countOf(any, MARK);
        ok += countOf(okText, OK);
        tailAny = any.slice(-(MARK.length - 1));
        tailOk = okText.slice(-(OK.length - 1));
        responses += n;
        if (running && n > 0) socket.write(more(n));
      });
      socket.on('error', () => {});
      sockets.push(socket);
    }
    setTimeout(() => {
      running = false;
      const seconds = (performance.now() - start) / 1000;
      for (const s of sockets) s.destroy();
      resolve({ responses, ok, seconds });
    }, o.durationMs);
  });
}

run(workerData).then((r) => parentPort.postMessage(r));
