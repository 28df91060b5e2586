/**
 * Client messages whose events will never finish are answered all the same: a message whose
 * handler ran past the event timeout, one cancelled with its session's queued events behind it,
 * one whose handler awaited on an event thread that was ended, and one running on an event
 * thread that exited on its own. Each is queued again on its
 * session's tag as an `_session.unanswered` event carrying its frame, which sends the `_error`
 * frame (`GSF_ERR_MESSAGE_TIMEOUT` or `GSF_ERR_MESSAGE_DROPPED`) with the message's id, so a
 * request is answered rather than left to the client's own time limit. A cancelled refusal or
 * answer of this kind (an error frame queued on the tag) is queued again as it was.
 *
 * They are queued ahead of the session's messages still staged on the main thread (those came
 * later), so its answers keep the order of its messages.
 */
import { native, EventKind, type CancelledEvent } from '../../native.ts';
import { intern } from '../../events/runtime.ts';
import { invokeStage } from '../../events/main/invoke-stage.ts';
import { workReady } from '../../events/wake.ts';
import type { EventGone } from '../../events/main/dispatcher.ts';
import { MESSAGE_EVENT, REFUSED_EVENT, UNANSWERED_EVENT, Unanswered } from '../worker/message-event.ts';

const REASON: Record<EventGone, number> = {
  'timed out': Unanswered.timedOut,
  'was cancelled': Unanswered.cancelled,
  'was abandoned': Unanswered.abandoned,
  'ended with its thread': Unanswered.lost,
};

/**
 * Queues the answers to the client messages among `events` (gone for `why`); returns how many.
 * `sessionClosing`: the timed-out event's session is being closed (4011), so neither it nor the
 * messages cancelled behind it are answered.
 */
export function answerUnanswered(events: readonly CancelledEvent[], why: EventGone, sessionClosing: boolean): number {
  if (sessionClosing && (why === 'timed out' || why === 'was cancelled')) return 0;
  const handlerId = intern(MESSAGE_EVENT);
  const refusedId = intern(REFUSED_EVENT);
  const unansweredId = intern(UNANSWERED_EVENT);
  // In the order they were queued: a session's ids increase with its messages.
  const messages = events.filter((e) => e.handlerId === handlerId && e.payload !== undefined).sort((a, b) => a.id - b.id);
  for (const e of messages) {
    const frame = e.payload!;
    if (e.nameId === refusedId || e.nameId === unansweredId) {
      native.push(e.tag, e.nameId, handlerId, e.sessionId, EventKind.network, frame, invokeStage.takeId());
      continue;
    }
    const payload = new Uint8Array(frame.byteLength + 1);
    payload[0] = REASON[why];
    payload.set(frame, 1);
    native.push(e.tag, unansweredId, handlerId, e.sessionId, EventKind.network, payload, invokeStage.takeId());
  }
  if (messages.length > 0) workReady();
  return messages.length;
}
