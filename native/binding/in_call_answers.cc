#include "in_call_answers.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "../core/plugin_api.h"
#include "../core/plugin_sessions.h"
#include "../core/runtime.h"
#include "../core/session_accounts.h"
#include "../include/gsf_plugin.h"
#include "cached_reads.h"

namespace gsf::binding {

namespace {

// Creates and deletes (service requests) keep their order with the fetches too.
bool IsObjectRequest(EffectCode code) {
  return code == kObjectFetch || code == kObjectFetchBy || code == kObjectSet || code == kObjectHeld || code == kServiceRequest;
}

// Whether effect `last` is the only object request of the whole chain: another one (a fetch, a
// set, a create earlier in the chain) keeps the order JavaScript gives them, so that the fetch
// finds what the event itself made.
bool OnlyObjectRequest(const CollectingEffects& fx, size_t last) {
  for (size_t k = 0; k < last; ++k) {
    if (IsObjectRequest(fx.list[k].code)) return false;
  }
  return true;
}

// The call's one account request (its effects start at `first`) when it may be answered here:
// an account_of that wants its answer, with no other account call and no session close in the
// whole chain (those go through the account manager, in order). SIZE_MAX otherwise.
size_t AnswerableAccountCall(const CollectingEffects& fx, size_t first) {
  size_t found = SIZE_MAX;
  for (size_t k = 0; k < fx.used; ++k) {
    EffectCode code = fx.list[k].code;
    if (code == kSessionClose) return SIZE_MAX;
    if (code != kAccountRequest) continue;
    if (found != SIZE_MAX || k < first) return SIZE_MAX;
    found = k;
  }
  if (found == SIZE_MAX) return SIZE_MAX;
  const Effect& e = fx.list[found];
  if (e.level != GSF_ACCOUNT_OF_SESSION || e.session == 0 || e.ids.empty()) return SIZE_MAX;
  return found;
}

}  // namespace

void AnswerInCall(CallResult& r, CollectingEffects& fx, const EventContext& ev) {
  double* cells = ContextCells();
  bool objects = cells[kObjectReads] == 1;
  bool accounts = cells[kAccountReads] == 1;
  if (!objects && !accounts) return;
  size_t first = 0;  // the effects of the call being looked at start here
  // Each continuation names its children on from the count the calls before it reached (SPEC 6.3).
  EventContext next = ev;
  uint64_t answered = 0, none = 0, held = 0, accounted = 0;
  CachedAnswer a;
  std::string account;
  while (r.status == GSF_STATUS_OK && !r.expired && fx.used > first) {
    const size_t last = fx.used - 1;
    Effect& e = fx.list[last];
    // A reply made before stays made: a failure later in the chain must not answer it again.
    const bool replied = r.replied;
    const uint64_t continuation = e.session;
    const bool fetch = e.code == kObjectFetch || e.code == kObjectFetchBy;
    size_t at = !fetch && accounts ? AnswerableAccountCall(fx, first) : SIZE_MAX;
    if (at != SIZE_MAX) {
      // The continuation's effects come after the call's, as when JavaScript answers it.
      const uint64_t account_continuation = fx.list[at].session;
      const SessionAccounts& table = ProcessSessionAccounts();
      if (table.Changing() || !table.Get(fx.list[at].ids[0], &account)) break;
      std::rotate(fx.list.begin() + static_cast<std::ptrdiff_t>(at), fx.list.begin() + static_cast<std::ptrdiff_t>(at) + 1,
                  fx.list.begin() + static_cast<std::ptrdiff_t>(fx.used));
      fx.used = first = last;  // the request is carried out here
      AccountAnswer answer;
      answer.has_account = true;
      answer.account = account;
      accounted++;
      if (r.children >= 0) next.children = static_cast<uint32_t>(r.children);
      r = ProcessSessionHost().Continue(account_continuation, next, answer, &fx);
    } else if (fetch) {
      a = CachedAnswer{};
      if (!objects || !OnlyObjectRequest(fx, last) || !LookupCached(e, &a)) break;
      if (a.found && e.level == GSF_OBJECT_WRITE) {
        // The event holds the object from here on: later fetches go through JavaScript.
        e.code = kObjectHeld;
        e.b = a.id;
        e.version = static_cast<double>(a.version);
        e.c.swap(a.stored);
        objects = false;
        cells[kObjectReads] = 0;
        first = fx.used;
        held++;
      } else {
        fx.used = first = last;
        answered++;
        if (!a.found) none++;
      }
      if (r.children >= 0) next.children = static_cast<uint32_t>(r.children);
      r = ProcessApiHost().Continue(continuation, next, a.found, a.id, a.fields, &fx);
    } else {
      break;
    }
    r.replied = r.replied || replied;
    if (r.expired) {
      // As when JavaScript runs it: the timed-out continuation's effects are dropped, the calls'
      // before it stand, and the call reports the timeout (GSF_STATUS_EXPIRED).
      DropHeld(fx, first);
      fx.used = first;
      r.expired = false;
    }
  }
  CounterStore& counters = ProcessRuntime().counters;
  if (accounted > 0) counters.Increase("engine", "native_account_answers", static_cast<double>(accounted));
  if (held > 0) counters.Increase("object", "native_cached_writes", static_cast<double>(held));
  if (answered == 0) return;
  cells[kReadsAnswered] += static_cast<double>(answered);
  cells[kReadsNone] += static_cast<double>(none);
  counters.Increase("object", "native_cached_reads", static_cast<double>(answered));
}

}  // namespace gsf::binding
