/** Binds a uWebSockets.js app; port 0 picks a free port. Shared by every gsf listener. */
import net from 'node:net';
import uWS from 'uWebSockets.js';

export interface Listening {
  /** The port actually bound. */
  port: number;
  /** Stops listening (idempotent). */
  close(): void;
}

export function listenUws(app: uWS.TemplatedApp, address: string, port: number, label: string): Promise<Listening> {
  return new Promise((resolve, reject) => {
    app.listen(address, port, (socket) => {
      if (!socket) {
        // uWS does not say why: a bind of our own on the same address does (EADDRINUSE, EACCES, …).
        void whyNoListen(address, port).then((why) => reject(new Error(`${label}: cannot listen on ${address}:${port}${why}`)));
        return;
      }
      let open = true;
      resolve({
        port: uWS.us_socket_local_port(socket),
        close: () => {
          if (open) uWS.us_listen_socket_close(socket);
          open = false;
        },
      });
    });
  });
}

/** The system error a bind of `address:port` meets now, as ` (EADDRINUSE: …)`, or '' if it binds. */
function whyNoListen(address: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(` (${err.code ?? 'error'}: ${describe(err.code)})`));
    try {
      probe.listen({ host: address === '' ? undefined : address, port, exclusive: true }, () => probe.close(() => resolve('')));
    } catch (err) {
      resolve(` (${(err as Error).message})`);
    }
  });
}

function describe(code: string | undefined): string {
  switch (code) {
    case 'EADDRINUSE': return 'another process listens on this port';
    case 'EACCES': return 'a port below 1024 needs privileges';
    case 'EADDRNOTAVAIL': return 'this machine has no such address';
    case 'ENOTFOUND': return 'the address does not resolve';
    default: return 'the system refused the bind';
  }
}
