// Session-out flush notes (native/core/flush_mailbox.h): event threads post, the main thread
// takes them all when woken. The wake-up is a thread-safe function of the main thread's
// environment, called only for the first note after a drain; it never keeps the process alive.
#include <cstdint>
#include <vector>

#include "../core/flush_mailbox.h"
#include "bindings.h"
#include "boundary.h"
#include "main_notifier.h"

namespace gsf::binding {

namespace {

// Leaked on purpose: event threads may post while the process exits.
FlushMailbox& Mailbox() {
  static FlushMailbox* m = new FlushMailbox();
  return *m;
}

MainNotifier& Reader() {
  static MainNotifier* n = new MainNotifier("gsf-flush-notes");
  return *n;
}

// (thread, seq, end): a worker's ring has records up to `end`, flush number `seq`.
Napi::Value FlushNotePost(const Napi::CallbackInfo& info) {
  FlushNote note;
  note.thread = static_cast<int32_t>(IntegerArg(info, 0, "thread", 0, 2147483647.0));
  note.seq = IntegerArg(info, 1, "seq", 0, kMaxSafeInteger);
  note.end = static_cast<uint32_t>(IntegerArg(info, 2, "end", 0, 4294967295.0));
  if (Mailbox().Post(note)) Reader().Notify();
  return info.Env().Undefined();
}

// [thread, seq, end]* of every note since the last call, in posting order.
Napi::Value FlushNotesTake(const Napi::CallbackInfo& info) {
  std::vector<FlushNote> notes = Mailbox().Take();
  Napi::Float64Array out = Napi::Float64Array::New(info.Env(), notes.size() * 3);
  size_t i = 0;
  for (const FlushNote& n : notes) {
    out[i++] = n.thread;
    out[i++] = n.seq;
    out[i++] = n.end;
  }
  return out;
}

Napi::Value OnFlushNotes(const Napi::CallbackInfo& info) {
  Reader().Set(info);
  // Notes posted while no reader was set rang nobody, and later ones ring only an empty mailbox.
  if (Mailbox().Size() > 0) Reader().Notify();
  return info.Env().Undefined();
}

}  // namespace

void FlushMailboxBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<FlushNotePost>(env, exports, "flushNotePost");
  Export<FlushNotesTake>(env, exports, "flushNotesTake");
  Export<OnFlushNotes>(env, exports, "onFlushNotes");
}

}  // namespace gsf::binding
