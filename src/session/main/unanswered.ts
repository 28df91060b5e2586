/**
 * Client messages whose events will never finish are answered all the same: a message whose
 * handler ran past the event timeout, one cancelled with its session's queued events behind it,
 * one whose handler awaited on an event thread that was ended, and one running on an event
 * thread that exited on its own. The native queue puts each back where it stood, first on its
 * session's tag (before the session's later messages, those pushed afterwards included), as an
 * `_session.unanswered` event carrying its frame after a byte saying why; that event sends the
 * `_error` frame (`GSF_ERR_MESSAGE_TIMEOUT` or `GSF_ERR_MESSAGE_DROPPED`) with the message's id,
 * so a request is answered rather than left to the client's own time limit. An error frame
 * queued as an event (`_session.refused`, or such an answer) goes back as it is.
 */
import { native } from '../../native.ts';
import { intern } from '../../events/runtime.ts';
import { MESSAGE_EVENT, REFUSED_EVENT, UNANSWERED_EVENT } from '../worker/message-event.ts';

/**
 * Turns the answers on. `sessionClosing`: a timeout closes its session (4011), so the messages
 * that timed out or were cancelled with it are not answered (abandoned and lost ones still are).
 */
export function answerUnansweredMessages(sessionClosing: boolean): void {
  native.setAnsweredMessages(intern(MESSAGE_EVENT), intern(UNANSWERED_EVENT), intern(REFUSED_EVENT), !sessionClosing);
}

/** Turns them off (the session service stopped: no message event is queued any more). */
export function stopAnsweringMessages(): void {
  native.setAnsweredMessages(0, 0, 0, false);
}
