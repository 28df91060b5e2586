/** HTTP helpers for API-service tests. */
export interface Reply {
  status: number;
  body: unknown;
  text: string;
  headers: Headers;
}

/** Parses Prometheus text format into name{labels} → value. */
export function parseExposition(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`bad exposition line: ${line}`);
    out.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]));
  }
  return out;
}

export function client(port: number, token?: string) {
  const call = async (method: string, path: string, body?: string): Promise<Reply> => {
    const headers: Record<string, string> = {};
    if (token) headers.Authorization = `Bearer ${token}`;
    const r = await fetch(`http://127.0.0.1:${port}${path}`, { method, body, headers });
    const text = await r.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: r.status, body: parsed, text, headers: r.headers };
  };
  return {
    get: (path: string) => call('GET', path),
    put: (path: string) => call('PUT', path),
    post: (path: string, body?: string) => call('POST', path, body),
  };
}
