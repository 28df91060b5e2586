/**
 * A loopback port where nothing listens, held so that nothing else can take it meanwhile: a
 * port freed and reused later may be taken by a server of a test file running alongside.
 */
import net from 'node:net';
import { once } from 'node:events';

export interface HeldPort {
  readonly port: number;
  /** Lets the port go (at once: no TIME_WAIT on it). */
  release(): void;
}

/**
 * Holds a loopback port (`port`, or one the system picks) by a client socket bound to it and
 * connected to a listener of our own. While it is held a connection to the port is refused
 * (ECONNREFUSED), and a server asking for any free port (port 0) never gets it.
 */
export async function holdPort(port = 0): Promise<HeldPort> {
  const server = net.createServer((s) => s.on('error', () => undefined));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const to = { host: '127.0.0.1', port: (server.address() as net.AddressInfo).port };
  const socket = net.connect(port === 0 ? to : { ...to, localAddress: '127.0.0.1', localPort: port });
  socket.on('error', () => undefined);
  try {
    await once(socket, 'connect');
  } catch (err) {
    server.close();
    throw err;
  }
  // Never what keeps a test process running.
  server.unref();
  socket.unref();
  return {
    port: socket.localPort!,
    release() {
      socket.resetAndDestroy();
      server.close();
    },
  };
}
