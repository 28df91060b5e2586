// Session-out flush notes (native/core/flush_mailbox.h): event threads post, the main thread
// takes them all when woken. The wake-up is a thread-safe function of the main thread's
// environment, called only for the first note after a drain; it never keeps the process alive.
#include <cstdint>
#include <mutex>
#include <set>
#include <vector>

#include "../core/flush_mailbox.h"
#include "bindings.h"
#include "boundary.h"

namespace gsf::binding {

namespace {

struct Reader {
  std::mutex mu;
  Napi::ThreadSafeFunction tsfn;
  napi_env env = nullptr;
  bool live = false;
  std::set<napi_env> hooked;
};

// Leaked on purpose: event threads may post while the process exits.
FlushMailbox& Mailbox() {
  static FlushMailbox* m = new FlushMailbox();
  return *m;
}

Reader& TheReader() {
  static Reader* r = new Reader();
  return *r;
}

void ReleaseLocked(Reader& r) {
  if (!r.live) return;
  r.live = false;
  r.env = nullptr;
  r.tsfn.Release();
}

void Cleanup(void* arg) {
  Reader& r = TheReader();
  std::lock_guard<std::mutex> lock(r.mu);
  r.hooked.erase(static_cast<napi_env>(arg));
  if (r.env == arg) ReleaseLocked(r);
}

// (thread, seq, end): a worker's ring has records up to `end`, flush number `seq`.
Napi::Value FlushNotePost(const Napi::CallbackInfo& info) {
  FlushNote note;
  note.thread = static_cast<int32_t>(IntegerArg(info, 0, "thread", 0, 2147483647.0));
  note.seq = IntegerArg(info, 1, "seq", 0, kMaxSafeInteger);
  note.end = static_cast<uint32_t>(IntegerArg(info, 2, "end", 0, 4294967295.0));
  if (Mailbox().Post(note)) {
    Reader& r = TheReader();
    std::lock_guard<std::mutex> lock(r.mu);
    if (r.live) r.tsfn.NonBlockingCall();
  }
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
  Napi::Env env = info.Env();
  Reader& r = TheReader();
  std::lock_guard<std::mutex> lock(r.mu);
  ReleaseLocked(r);
  if (info[0].IsNull() || info[0].IsUndefined()) return env.Undefined();
  if (!info[0].IsFunction()) ThrowCoded(env, ErrorKind::kTypeError, kErrArgument, "fn must be a function or null");
  r.tsfn = Napi::ThreadSafeFunction::New(env, info[0].As<Napi::Function>(), "gsf-flush-notes", 0, 1);
  r.tsfn.Unref(env);
  r.env = env;
  r.live = true;
  if (r.hooked.insert(env).second) napi_add_env_cleanup_hook(env, Cleanup, env);
  return env.Undefined();
}

}  // namespace

void FlushMailboxBinding::Init(Napi::Env env, Napi::Object exports) {
  Export<FlushNotePost>(env, exports, "flushNotePost");
  Export<FlushNotesTake>(env, exports, "flushNotesTake");
  Export<OnFlushNotes>(env, exports, "onFlushNotes");
}

}  // namespace gsf::binding
