/**
 * Which client message types the listener hands to workers, by the type bytes it peeked at
 * (main thread). A type a plugin handles gets its interned id (the event is named after it);
 * any other is unknown (-1). The last type seen is matched as bytes, with no string made:
 * a burst of messages mostly shares one type.
 */
import { intern } from '../events/runtime.ts';
import { typeText } from './codec.ts';

/** How many message types (handled or not) are remembered by name. */
const MAX_REMEMBERED_TYPES = 4096;

export class MessageTypes {
  /** nameId per type seen, -1 for types no plugin handles. */
  private readonly ids = new Map<string, number>();
  private lastType = new Uint8Array(0);
  private lastId = -1;
  /** The text of the last type `idOf` found unknown. */
  unknown = '';

  constructor(private readonly handled: (type: string) => boolean) {}

  /** The event name id of the type at `bytes[start, end)`, or -1 (its text is then in `unknown`). */
  idOf(bytes: Uint8Array, start: number, end: number): number {
    const last = this.lastType;
    if (end - start === last.length) {
      let same = true;
      for (let i = 0; same && i < last.length; i++) same = bytes[start + i] === last[i];
      if (same) return this.lastId;
    }
    const type = typeText(bytes, start, end);
    const id = this.ids.get(type) ?? this.learn(type);
    if (id < 0) {
      this.unknown = type;
      return -1;
    }
    this.lastType = bytes.slice(start, end);
    this.lastId = id;
    return id;
  }

  private learn(type: string): number {
    const id = !type.startsWith('_') && this.handled(type) ? intern(type) : -1;
    // Handled types are few; unknown ones come from clients and are remembered only up to a bound.
    if (id >= 0 || this.ids.size < MAX_REMEMBERED_TYPES) this.ids.set(type, id);
    return id;
  }

  /** Forgets every type (the handled set changed: a plugin was reloaded). */
  forget(): void {
    this.ids.clear();
    this.lastType = new Uint8Array(0);
    this.lastId = -1;
  }
}
