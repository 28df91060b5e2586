#include "plugin_api.h"

#include "plugin_hooks.h"

#include <string>

namespace gsf {

using hooks::Borrow;
using hooks::ReleaseData;
using hooks::Finish;
using hooks::RunHook;

ApiHost& ProcessApiHost() {
  static ApiHost* host = new ApiHost();  // never destroyed: plugin threads may answer during exit
  return *host;
}

uint32_t ApiHost::AddEntry(const NativePlugin* plugin, gsf_on_api fn, void* user_data) {
  std::lock_guard<std::mutex> lock(writers_mu_);
  if (entry_count_ >= kMaxEntries) return UINT32_MAX;
  entry_store_.push_back(ApiEntry{plugin, fn, user_data});
  uint32_t index = entry_count_++;
  entries_[index].store(&entry_store_.back(), std::memory_order_release);
  return index;
}

const ApiEntry* ApiHost::Entry(uint32_t index) const {
  return index < kMaxEntries ? entries_[index].load(std::memory_order_acquire) : nullptr;
}

ApiRegistrations& ApiHost::Registrations(const NativePlugin* plugin) {
  std::lock_guard<std::mutex> lock(writers_mu_);
  return registrations_[plugin];
}

const ApiRegistrations* ApiHost::Find(const NativePlugin* plugin) const {
  std::lock_guard<std::mutex> lock(const_cast<std::mutex&>(writers_mu_));
  auto it = registrations_.find(plugin);
  return it == registrations_.end() ? nullptr : &it->second;
}

void ApiHost::Forget(const NativePlugin* plugin) {
  std::lock_guard<std::mutex> lock(writers_mu_);
  registrations_.erase(plugin);
}

namespace {

// "operation\nmethod\npath" -> the three parts.
void SplitLabel(std::string_view label, std::string_view parts[3]) {
  for (int i = 0; i < 3; ++i) {
    size_t nl = i < 2 ? label.find('\n') : std::string_view::npos;
    parts[i] = label.substr(0, nl);
    label = nl == std::string_view::npos ? std::string_view() : label.substr(nl + 1);
  }
}

}  // namespace

CallResult ApiHost::Call(uint32_t index, const EventContext& event, uint64_t rid, uint32_t kind, std::string_view args,
                         std::string_view label, PluginEffects* effects) {
  const ApiEntry* entry = Entry(index);
  if (!entry) {
    CallResult r;
    r.status = GSF_STATUS_INVALID_ARGUMENT;
    r.error = "no native API handler " + std::to_string(index);
    return r;
  }
  {
    std::lock_guard<std::mutex> lock(writers_mu_);
    writers_[rid] = Writer{kind, false, event.event_id};
  }
  std::string_view parts[3];
  SplitLabel(label, parts);
  gsf_type_api_request request;
  request.struct_size = sizeof request;
  request.answer_kind = kind;
  request.operation = Borrow(parts[0]);
  request.method = Borrow(parts[1]);
  request.path = Borrow(parts[2]);
  request.args = gsf_bytes(args.data(), args.size());
  CallScope scope(entry->plugin, effects, &event, false);
  gsf_type_status status = RunHook(scope, [&] { return entry->fn(scope.call(), &request, gsf_type_api_writer{rid}, entry->user_data); });
  return Finish(scope.state(), status);
}

namespace {

bool KindFits(uint32_t wanted, uint32_t given) {
  if (wanted == GSF_ANSWER_ANY || wanted == given) return true;
  return wanted == GSF_ANSWER_JSON && (given == GSF_ANSWER_JSON_OBJECT || given == GSF_ANSWER_JSON_ARRAY);
}

// A line about a writer, through the live call's effects when there is one, else standard error.
void WriterLine(int level, const std::string& line) {
  CallState& s = ThisThreadCall();
  if (s.token.load(std::memory_order_relaxed) != 0 && s.effects && !s.Revoked()) {
    s.effects->Log(level, line);
  } else {
    StderrEffects().Log(level, line);
  }
}

}  // namespace

gsf_type_status ApiHost::Answer(gsf_type_api_writer writer, uint32_t kind, int32_t status, std::string body, bool has_body) {
  CallState& s = ThisThreadCall();
  const bool in_call = s.token.load(std::memory_order_relaxed) != 0 && s.effects && !s.Revoked();
  void (*notify)() = nullptr;
  bool mailed = false;
  {
    std::lock_guard<std::mutex> lock(writers_mu_);
    auto it = writers_.find(writer.token);
    if (it == writers_.end()) {
      if (answered_released_.count(writer.token) != 0) {
        WriterLine(1, "native writer " + std::to_string(writer.token) + ": a second answer was ignored; a request is answered once");
        return GSF_STATUS_CONFLICT;
      }
      WriterLine(1, "native writer " + std::to_string(writer.token) +
                        ": the request was already answered with 504 or never existed; this answer was ignored");
      return GSF_STATUS_EXPIRED;
    }
    Writer& w = it->second;
    if (status == GSF_STATUS_OK && !KindFits(w.kind, kind)) return GSF_STATUS_INVALID_ARGUMENT;
    if (w.answered) {
      WriterLine(1, "native writer " + std::to_string(writer.token) + ": a second answer was ignored; a request is answered once");
      return GSF_STATUS_CONFLICT;
    }
    w.answered = true;
    if (!in_call || s.event.event_id != w.event_id) {
      // Answered from elsewhere: to the mailbox under the same lock, so that whoever sees the
      // writer answered finds the answer there.
      bool was_empty = mailbox_.empty();
      mailbox_.push_back(ApiAnswerRecord{writer.token, status, has_body, has_body ? std::move(body) : std::string(),
                                         has_body ? std::string() : std::move(body)});
      if (was_empty) notify = notify_;
      mailed = true;
    }
  }
  if (notify) notify();
  if (!mailed) {
    // The call handling the request answered: the answer goes with the event's other effects.
    s.effects->ApiAnswer(writer.token, status, has_body ? std::string_view(body) : std::string_view(), has_body,
                         has_body ? std::string_view() : std::string_view(body));
  }
  return GSF_STATUS_OK;
}

void ApiHost::Release(uint64_t rid) {
  std::lock_guard<std::mutex> lock(writers_mu_);
  auto it = writers_.find(rid);
  if (it == writers_.end()) return;
  if (it->second.answered && answered_released_.insert(rid).second) {
    answered_order_.push_back(rid);
    if (answered_order_.size() > kAnsweredKept) {
      answered_released_.erase(answered_order_.front());
      answered_order_.pop_front();
    }
  }
  writers_.erase(it);
}

bool ApiHost::Answered(uint64_t rid) {
  std::lock_guard<std::mutex> lock(writers_mu_);
  auto it = writers_.find(rid);
  return it != writers_.end() && it->second.answered;
}

void ApiHost::PostAnswers(std::vector<ApiAnswerRecord>&& answers) {
  if (answers.empty()) return;
  void (*notify)() = nullptr;
  {
    std::lock_guard<std::mutex> lock(writers_mu_);
    bool was_empty = mailbox_.empty();
    if (was_empty) {
      mailbox_.swap(answers);
    } else {
      for (ApiAnswerRecord& a : answers) mailbox_.push_back(std::move(a));
    }
    if (was_empty) notify = notify_;
  }
  if (notify) notify();
}

std::vector<ApiAnswerRecord> ApiHost::TakeAnswers() {
  std::lock_guard<std::mutex> lock(writers_mu_);
  std::vector<ApiAnswerRecord> out;
  out.swap(mailbox_);
  return out;
}

void ApiHost::SetNotify(void (*notify)()) {
  std::lock_guard<std::mutex> lock(writers_mu_);
  notify_ = notify;
}

uint64_t ApiHost::AddContinuation(const NativePlugin* plugin, gsf_on_object then, void* user_data, uint64_t event_id,
                                  gsf_on_drop drop, MessageOrigin origin) {
  return continuations_.Add(Continuation{plugin, then, user_data, event_id, drop, std::move(origin)});
}

CallResult ApiHost::Continue(uint64_t id, const EventContext& event, bool found, std::string_view object_id,
                             std::string_view fields, PluginEffects* effects) {
  Continuation c;
  if (!continuations_.Take(id, &c)) {
    CallResult r;
    r.status = GSF_STATUS_INVALID_ARGUMENT;
    r.error = "no native continuation " + std::to_string(id);
    return r;
  }
  CallScope scope(c.plugin, effects, &event, false, &c.origin);
  gsf_type_status status = RunHook(scope, [&] {
    return c.fn(scope.call(), found ? 1 : 0, Borrow(found ? object_id : std::string_view()),
                gsf_bytes(found ? fields.data() : nullptr, found ? fields.size() : 0), c.user_data);
  });
  CallResult result = Finish(scope.state(), status);
  AnswersOrigin(result, c.origin);
  ReleaseData(c.drop, c.user_data);
  return result;
}

}  // namespace gsf
