/**
 * The main thread's side of answers from event threads: a batch taken from the native mailbox
 * answers each request once, with its body as bytes, and one answer whose writer fails keeps
 * none of the others from theirs.
 */
import test from 'ava';
import { native } from '../../src/native.ts';
import { PendingRequests } from '../../src/api/main/pending.ts';
import { LaterResponse, type ApiResponse } from '../../src/api/main/router.ts';
import type { Logger } from '../../src/log/logger.ts';

function recordingLog(lines: string[]): Logger {
  return {
    info: (m) => { lines.push(`I ${m}`); },
    warn: (m) => { lines.push(`W ${m}`); },
    error: (m) => { lines.push(`E ${m}`); },
    vlog: () => undefined,
    vEnabled: () => false,
  };
}

async function until<T>(read: () => T | undefined): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const v = read();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('timed out');
}

test.serial('a batch answers every request once; a writer that throws is logged and the others are written', async (t) => {
  const lines: string[] = [];
  const pending = new PendingRequests(10_000, recordingLog(lines));
  try {
    const open = (path: string): [number, LaterResponse] => {
      const answer = new LaterResponse();
      const rid = PendingRequests.nextId();
      pending.begin(rid, { method: 'GET', path, audit: 'api', native: false }, answer);
      return [rid, answer];
    };
    const [ra, a] = open('/a');
    const [rb, b] = open('/b');
    const [rc, c] = open('/c');
    a.onAnswer(() => { throw new Error('the socket is gone'); });
    let gotB: ApiResponse | undefined, gotC: ApiResponse | undefined;
    let calls = 0;
    b.onAnswer((r) => { gotB = r; calls++; });
    c.onAnswer((r) => { gotC = r; calls++; });
    native.pluginApiPostAnswers([ra, 200, '{"a":1}', rb, 200, '{"b":"é"}', rc, 204, null]);
    await until(() => gotB);
    await until(() => gotC);
    t.is(gotB!.status, 200);
    t.is(gotB!.contentType, 'application/json');
    t.true(Buffer.isBuffer(gotB!.body));
    t.deepEqual(JSON.parse((gotB!.body as Buffer).toString('utf8')), { b: 'é' });
    t.deepEqual(gotC, { status: 204 });
    t.is(pending.size, 0);
    t.true(lines.some((l) => l.startsWith('E answering GET /a failed') && l.includes('the socket is gone')), lines.join('\n'));
    t.is(lines.filter((l) => l.includes('api audit: method=GET')).length, 3);
    // A second answer to a request already answered is ignored (and named in a warning).
    native.pluginApiPostAnswers([rb, 500, '{}']);
    await until(() => lines.find((l) => l.includes(`request ${rb} came after its deadline`)));
    t.is(calls, 2);
  } finally {
    pending.close();
  }
});
