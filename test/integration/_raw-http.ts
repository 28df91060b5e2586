/** Raw-socket HTTP for tests that need the exact bytes a listener sends (or that it sends none). */
import net from 'node:net';

export interface RawResult {
  /** Everything the server sent, as latin1 text. */
  text: string;
  /** How the exchange ended: the server closed (FIN or reset), or `until` matched. */
  end: 'closed' | 'reset' | 'matched';
  /** Milliseconds from the first write to the end. */
  ms: number;
}

/**
 * Writes `chunks` to a new connection and waits until `until(text)` holds or the server closes
 * the connection; gives up (rejects) after `limitMs`.
 */
export function rawExchange(port: number, chunks: Array<string | Buffer>, until?: (text: string) => boolean, limitMs = 30000): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = Date.now();
    let text = '';
    let reset = false;
    let settled = false;
    const finish = (end: RawResult['end']): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, end, ms: Date.now() - started });
    };
    const timer = setTimeout(() => {
      settled = true;
      socket.destroy();
      reject(new Error(`no end after ${limitMs} ms; received ${JSON.stringify(text.slice(0, 200))}`));
    }, limitMs);
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (until?.(text)) finish('matched');
    });
    socket.on('error', () => { reset = true; });
    socket.on('close', () => finish(reset ? 'reset' : 'closed'));
    socket.on('connect', () => { for (const c of chunks) socket.write(c); });
  });
}

export interface ParsedResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/**
 * Splits the bytes of pipelined responses. `heads` says which responses carry no body whatever
 * their Content-Length (answers to HEAD).
 */
export function parseResponses(text: string, heads: boolean[] = []): ParsedResponse[] {
  const out: ParsedResponse[] = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`incomplete response head: ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as [string, string]));
    const length = heads[out.length] ? 0 : Number(headers.get('content-length') ?? '0');
    if (rest.length < end + 4 + length) throw new Error('incomplete response body');
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

/** True once `text` holds `n` complete responses (see parseResponses). */
export function hasResponses(text: string, n: number, heads: boolean[] = []): boolean {
  try {
    return parseResponses(text, heads).length >= n;
  } catch {
    return false;
  }
}
