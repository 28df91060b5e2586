/** The WebSocket the SDK runs on: the part of the API it uses, and where it finds one. */

/** The part of the WebSocket API the SDK uses (browsers, Node 22+, the `ws` package). */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** The global WebSocket (browsers), else the `ws` package's (Node 20). */
export async function defaultWebSocket(): Promise<WebSocketConstructor> {
  const global = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (global) return global;
  // Only where there is no global WebSocket (Node 20). A plain import of the package, which a
  // bundler for the browser resolves to ws's browser stub (never called there), and no Node-only
  // module: the SDK bundles for the browser as it is.
  const ws = await import('ws') as unknown as { WebSocket?: WebSocketConstructor; default?: WebSocketConstructor };
  return (ws.WebSocket ?? ws.default)!;
}
