// What a native call asked for that this thread can answer without leaving the call: an
// account_of the session accounts know, and an object fetch the shared cache holds. The
// continuation then runs at once, in native code, instead of going back through JavaScript
// for the answer and a second call; a chain of them (the account, then the player fetched for
// write, then the reply) is one call. Everything else (other account calls, sets, misses,
// unusual keys) is left in the effects for src/plugins/native-calls.ts, which carries it out
// as before.
#pragma once

#include "../core/plugin_host.h"
#include "plugin_effects_binding.h"

namespace gsf::binding {

/**
 * Answers the requests of a call that ended OK (`r`, its effects `fx`), one after the other
 * while each continuation again makes one such request; a continuation's result becomes the
 * call's, and its effects follow the call's, as when JavaScript answers. JavaScript allows each
 * kind per call in the context cells:
 * - kObjectReads: the event holds no objects of its own yet, so the cache's copy is what a
 *   fetch would give, and the fetch is the call's last effect and the chain's only object request. A read
 *   answered so leaves nothing behind (it is counted in
 *   kReadsAnswered and kReadsNone); a fetch for write leaves a kObjectHeld record, from which
 *   JavaScript makes the event's copy at the version the handler saw, and ends the answering
 *   of fetches for the rest of the call.
 * - kAccountReads: no account call of the event is on its way. An account_of whose session
 *   the process's session accounts know is answered with that account, when it is the only
 *   account call of the whole chain and no session close is in it (those go through the
 *   account manager, in order).
 */
void AnswerInCall(CallResult& r, CollectingEffects& fx, const EventContext& ev);

}  // namespace gsf::binding
