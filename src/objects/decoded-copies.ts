/**
 * The decoded objects an event thread keeps (`ObjectStore.decoded_copies_per_thread`), so that a
 * hot object read by event after event is decoded once per stored version, not once per read.
 *
 * A table of a power of two slots, indexed by the stamp of the cache entry a copy came from
 * (unique per stored bytes, handed out in sequence): slot `stamp % size` holds the stamp in
 * `stamps`, which the native lookup reads to skip copying bytes this thread holds decoded, and
 * the fields beside it. A newer stamp takes its slot. Since stamps come in sequence, the slots
 * hold the copies of the most recently stored versions this thread read: a scan of up to `size`
 * objects keeps them all. A lookup is one array read, with no hashing of the id.
 */
import type { Fields } from './model.ts';

/** The most slots a thread keeps (a larger setting is cut to this). */
export const MAX_DECODED_COPIES = 1 << 22;

export class DecodedCopies {
  /** The stamp held in each slot (0: none); null when the thread keeps no copies. */
  readonly stamps: Float64Array | null;
  private readonly fields: Array<Fields | undefined>;

  /** `wanted` copies at least, rounded up to a power of two (0 keeps none). */
  constructor(wanted: number) {
    if (wanted <= 0) {
      this.stamps = null;
      this.fields = [];
      return;
    }
    let size = 1;
    while (size < Math.min(wanted, MAX_DECODED_COPIES)) size *= 2;
    this.stamps = new Float64Array(size);
    this.fields = new Array<Fields | undefined>(size).fill(undefined);
  }

  get size(): number {
    return this.stamps?.length ?? 0;
  }

  /** The fields decoded from the entry with this stamp, if this thread holds them. */
  get(stamp: number): Fields | undefined {
    const stamps = this.stamps;
    if (stamps === null) return undefined;
    const slot = stamp % stamps.length;
    return stamps[slot] === stamp ? this.fields[slot] : undefined;
  }

  /** Keeps the fields decoded from the entry with this stamp (in place of its slot's copy). */
  set(stamp: number, fields: Fields): void {
    const stamps = this.stamps;
    if (stamps === null) return;
    const slot = stamp % stamps.length;
    stamps[slot] = stamp;
    this.fields[slot] = fields;
  }
}
