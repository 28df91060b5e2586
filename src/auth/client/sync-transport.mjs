// Helper thread of AuthenticationClient's sync calls: the calling thread blocks in Atomics.wait
// while this thread does the HTTP request, posts the outcome on its port and wakes the caller.
// Plain JavaScript: it needs no TypeScript loader, so it starts fast on any thread.
/* global AbortSignal */
import { parentPort, workerData } from 'node:worker_threads';

const { flag, port } = workerData;
const signal = new Int32Array(flag);

parentPort.on('message', async ({ id, url, body, timeoutMs }) => {
  let outcome;
  const abort = AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, signal: abort });
    outcome = { id, status: res.status, text: await res.text() };
  } catch (err) {
    outcome = abort.aborted
      ? { id, failure: 'timeout' }
      : { id, failure: 'unreachable', detail: err?.cause?.code ?? String(err?.message ?? err) };
  }
  port.postMessage(outcome);
  Atomics.store(signal, 0, id);
  Atomics.notify(signal, 0);
});
