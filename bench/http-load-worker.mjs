// HTTP/1.1 load generator (a worker thread): keep-alive connections, each with a fixed number of
// pipelined GETs in flight; every response seen sends one more request. Plain JavaScript so it
// loads in a worker without a TypeScript loader.
import net from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

const MARK = 'HTTP/1.1 ';

function countMarks(text) {
  let n = 0;
  for (let i = text.indexOf(MARK); i >= 0; i = text.indexOf(MARK, i + MARK.length)) n++;
  return n;
}

function run(o) {
  const extra = Object.entries(o.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const request = `GET ${o.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;
  let responses = 0;
  let running = true;
  const sockets = [];
  const start = performance.now();
  return new Promise((resolve) => {
    for (let c = 0; c < o.connections; c++) {
      const socket = net.connect(o.port, '127.0.0.1');
      socket.setNoDelay(true);
      let tail = '';
      socket.on('connect', () => socket.write(request.repeat(o.depth)));
      socket.on('data', (chunk) => {
        const text = tail + chunk.toString('latin1');
        const n = countMarks(text);
        tail = text.slice(-(MARK.length - 1));
        responses += n;
        if (running && n > 0) socket.write(request.repeat(n));
      });
      socket.on('error', () => {});
      sockets.push(socket);
    }
    setTimeout(() => {
      running = false;
      const seconds = (performance.now() - start) / 1000;
      for (const s of sockets) s.destroy();
      resolve({ responses, seconds });
    }, o.durationMs);
  });
}

run(workerData).then((r) => parentPort.postMessage(r));
