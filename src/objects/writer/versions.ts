/**
 * The version a new object is stored at. An id can be deleted and created again, and an event
 * that read the object before may still hold its old version: were versions to start at 1 again,
 * that event's update would match the new object and overwrite it. So a created object's version
 * comes from the clock (1024 per ms, increasing in this writer), above any version an earlier
 * object of that id reached in ordinary use; each update adds 1 as before.
 */
import { OpKind, type CommitRequest } from '../storage.ts';

let lastCreated = 0;

function createdVersion(): number {
  lastCreated = Math.max(Date.now() * 1024, lastCreated + 1);
  return lastCreated;
}

/** Gives each create of `requests` the version it is stored at (op[3], 0 until then). */
export function stampCreates(requests: readonly CommitRequest[]): void {
  for (const request of requests) {
    for (const op of request.ops) if (op[0] === OpKind.create && op[3] === 0) op[3] = createdVersion();
  }
}
