/**
 * Counter changes an event holds, like the children it invokes: made during its synchronous run,
 * or while it has an object transaction, they wait in `RunningEvent.heldInvokes` and are made
 * when the event lets its effects go (its run ended without objects, or its changes are
 * durable); a rerun or a discarded commit drops them. The event itself reads its own pending
 * changes on top of the stored value (`pendingValue`).
 */
import { native } from '../native.ts';

/** One held change: a set (`update`) or an addition (`increase`, `decrease` as a negative amount). */
export class HeldCounter {
  constructor(
    readonly category: string,
    readonly name: string,
    readonly set: boolean,
    readonly value: number,
    readonly isDouble: boolean,
    readonly description: string | undefined,
  ) {}

  /** Makes the change in the shared store. */
  apply(): void {
    if (this.set) native.counterUpdate(this.category, this.name, this.value, this.isDouble, this.description);
    else native.counterIncrease(this.category, this.name, this.value);
  }
}

/**
 * A timer an event started, held with its other effects: its id is reserved at once (so
 * `cancel` works before the timer exists), and the timer starts when the event's run ends or
 * its object changes are durable; a dropped run (a rerun, a failed commit) lets the id go.
 */
export class HeldTimer {
  constructor(
    readonly id: number,
    readonly delayMs: number,
    readonly intervalMs: number,
    readonly nameId: number,
    readonly handlerId: number,
    readonly payload: Uint8Array | null,
  ) {}

  /** Starts the timer (nothing when it was cancelled meanwhile). */
  apply(): void {
    native.timerAdd(this.delayMs, this.intervalMs, this.nameId, this.handlerId, this.payload, this.id);
  }

  /** Lets the reserved id go: the timer never starts. */
  release(): void {
    native.timerRelease(this.id);
  }
}

/**
 * The counter's value as the event sees it: the stored value with the event's held changes
 * made on top, in order (null when neither the store nor the event has the counter). An
 * integer counter adds amounts truncated and wraps past int64, as the store does.
 */
export function pendingValue(held: readonly unknown[], category: string, name: string): number | null {
  let value: number | null = null;
  let isDouble = false;
  let read = false;
  for (const h of held) {
    if (!(h instanceof HeldCounter) || h.name !== name || h.category !== category) continue;
    if (h.set) {
      value = h.isDouble ? h.value : truncToInt64(h.value);
      isDouble = h.isDouble;
      read = true;
      continue;
    }
    if (!read) {
      const stored = native.counterGet(category, name);
      value = stored?.value ?? 0;
      isDouble = stored?.type === 'double';
      read = true;
    }
    value = isDouble ? (value ?? 0) + h.value : addInt64(value ?? 0, h.value);
  }
  return read ? value : native.counterValue(category, name);
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** An amount or value as the store makes it an int64: truncated, saturated at the ends, NaN as 0. */
function truncToInt64(v: number): number {
  if (Number.isNaN(v)) return 0;
  if (v >= 2 ** 63) return Number(INT64_MAX);
  if (v <= -(2 ** 63)) return Number(INT64_MIN);
  return Math.trunc(v);
}

/** `value + amount` on an integer counter as the store adds: the amount made an int64, the sum wrapping around. */
function addInt64(value: number, amount: number): number {
  const sum = value + Math.trunc(amount);
  if (Number.isSafeInteger(sum)) return sum;
  const delta = Number.isNaN(amount) ? 0n : amount >= 2 ** 63 ? INT64_MAX : amount <= -(2 ** 63) ? INT64_MIN : BigInt(Math.trunc(amount));
  return Number(BigInt.asIntN(64, BigInt(value) + delta));
}
