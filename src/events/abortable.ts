/** Waiting on a promise no longer than a signal allows (deadlines of pool replacements and reloads). */

/**
 * `p`, or a rejection with the signal's reason as soon as it aborts. `p` itself goes on (what
 * it runs cannot be stopped from here); its outcome after the abort is ignored.
 */
export function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return p;
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then((v) => {
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    }, (err: unknown) => {
      signal.removeEventListener('abort', onAbort);
      reject(err as Error);
    });
  });
}

/** A signal that aborts with `reason()` after `ms`, and a function that stops its timer. */
export function deadline(ms: number, reason: () => Error): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(reason()), ms);
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
