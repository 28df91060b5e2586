/**
 * Client messages queued as network events in batches. The main thread copies each frame
 * into a staging buffer as it arrives and hands the whole set to the native queue once per
 * event-loop turn (`pushBatch`: one call and one lock for all of them, instead of one per
 * message), then wakes the event workers that wait for network events.
 *
 * Order is kept: a tag's events enter the queue in arrival order, and every other push the
 * session service makes on a session tag (opened, closed) flushes the stage first.
 */
import { native, EventKind, PUSH_STRIDE } from '../native.ts';
import { wakeNetworkWorkers } from './outbound.ts';

const INITIAL_RECORDS = 1024;
const INITIAL_BYTES = 256 * 1024;

export class PushStage {
  private records = new Float64Array(INITIAL_RECORDS * PUSH_STRIDE);
  private bytes = new Uint8Array(INITIAL_BYTES);
  private count = 0;
  private used = 0;
  /** Events handed to the queue since the last wake-up. */
  private pushed = 0;
  private scheduled = false;
  private readonly endOfTurn = (): void => {
    this.scheduled = false;
    this.flush();
    const pushed = this.pushed;
    this.pushed = 0;
    if (pushed > 0) wakeNetworkWorkers(pushed);
  };

  constructor(private readonly handlerId: number) {}

  /** Stages one network event on the session's tag; `frame` is copied. */
  add(sessionId: number, nameId: number, frame: Uint8Array): void {
    const length = frame.byteLength;
    if (this.count * PUSH_STRIDE === this.records.length || length > this.bytes.length - this.used) {
      this.flush();
      if (length > this.bytes.length) this.bytes = new Uint8Array(Math.max(length, this.bytes.length * 2));
    }
    const r = this.count * PUSH_STRIDE;
    const records = this.records;
    records[r] = sessionId;
    records[r + 1] = nameId;
    records[r + 2] = this.handlerId;
    records[r + 3] = sessionId;
    records[r + 4] = EventKind.network;
    records[r + 5] = length;
    this.bytes.set(frame, this.used);
    this.used += length;
    this.count++;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.endOfTurn);
    }
  }

  /** Hands the staged events to the queue now (before any other push on a session tag). */
  flush(): void {
    if (this.count === 0) return;
    const count = this.count;
    this.count = 0;
    this.used = 0;
    native.pushBatch(this.records, count, this.bytes);
    this.pushed += count;
  }
}
