/** Binds a uWebSockets.js app; port 0 picks a free port. Shared by every gsf listener. */
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
        reject(new Error(`${label}: cannot listen on ${address}:${port}`));
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
