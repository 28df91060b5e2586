/** HTTP helpers for API-service tests. */
export interface Reply {
  status: number;
  body: unknown;
  text: string;
  headers: Headers;
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
