/**
 * Baseline of bench/auth: a raw uWebSockets.js route that reads the POST body and returns the
 * agent's success JSON. Prints its port on stdout.
 */
import uWS from 'uWebSockets.js';

const BODY = JSON.stringify({ result: 0, description: '' });
uWS.App()
  .post('/*', (res) => {
    res.onAborted(() => undefined);
    res.onData((_chunk, isLast) => {
      if (isLast) {
        res.cork(() => {
          res.writeStatus('200 OK');
          res.writeHeader('Content-Type', 'application/json');
          res.end(BODY);
        });
      }
    });
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) process.exit(1);
    process.stdout.write(`port=${uWS.us_socket_local_port(socket)}\n`);
  });
