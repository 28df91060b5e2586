/** Binds a uWebSockets.js app; port 0 picks a free port. Used by every gsf listener. */
import net from 'node:net';
import uWS from 'uWebSockets.js';

/** uWebSockets.js's ListenOptions; its typings lack the listen(host, port, options, cb) form it has. */
const LISTEN_DEFAULT = 0, LISTEN_EXCLUSIVE_PORT = 1;
type ListenWithOptions = (host: string, port: number, options: number, cb: (socket: uWS.us_listen_socket | false) => void) => unknown;

export interface Listening {
  /** The port actually bound. */
  port: number;
  /** Stops listening (idempotent). */
  close(): void;
}

/**
 * Listens on `address:port` alone (LIBUS_LISTEN_EXCLUSIVE_PORT): uWebSockets.js would otherwise
 * set SO_REUSEPORT, and a second server started on a port in use would start all the same and
 * take half of its connections. `shared`: the port is bound by each of the session service's I/O
 * threads, after the main thread has checked with a bind of its own that nobody else holds it.
 */
export function listenUws(app: uWS.TemplatedApp, address: string, port: number, label: string, shared = false): Promise<Listening> {
  return new Promise((resolve, reject) => {
    (app as unknown as { listen: ListenWithOptions }).listen(address, port, shared ? LISTEN_DEFAULT : LISTEN_EXCLUSIVE_PORT, (socket) => {
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
