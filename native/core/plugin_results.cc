// The ABI 1.2 result host (see plugin_results.h): gsf_on_result continuations, transactions and
// the declarations of native plugins. Every piece of user data is released exactly once, outside
// the lock: after its continuation ran, or when it was dropped (its event failed or timed out,
// its copy was retired, the server stopped).
#include "plugin_results.h"

#include "plugin_hooks.h"

#include <atomic>
#include <cmath>
#include <exception>

#include "plugin_services.h"
#include "runtime.h"

namespace gsf {

using hooks::Borrow;
using hooks::ReleaseData;
using hooks::Finish;
using hooks::RunHook;
namespace {

using namespace services;

std::atomic<CachedObjectReader> cached_reader{nullptr};

CallResult Missing(const char* what, uint64_t id) {
  CallResult r;
  r.status = GSF_STATUS_INVALID_ARGUMENT;
  r.error = std::string("no native ") + what + " " + std::to_string(id);
  return r;
}

gsf_type_call_result ResultOf(uint32_t op, const ResultAnswer& a) {
  gsf_type_call_result r;
  r.struct_size = sizeof r;
  r.op = op;
  r.status = a.status;
  r.reserved = 0;
  r.error_code = Borrow(a.code);
  r.message = Borrow(a.message);
  r.id = Borrow(a.id);
  r.value = gsf_type_borrowed_bytes{reinterpret_cast<const uint8_t*>(a.value.data()), a.value.size()};
  r.number = a.number;
  return r;
}

gsf_type_event_info EventInfo(const EventContext& event, const std::string& name) {
  gsf_type_event_info info;
  info.struct_size = sizeof info;
  info.kind = event.kind;
  info.event_id = event.event_id;
  info.tag = event.tag;
  info.session_id = event.session_id;
  info.name = Borrow(name);
  return info;
}

}  // namespace

void SetCachedObjectReader(CachedObjectReader reader) { cached_reader.store(reader); }
CachedObjectReader GetCachedObjectReader() { return cached_reader.load(); }

uint64_t ResultHost::AddContinuation(const NativePlugin* plugin, uint32_t op, gsf_on_result then, void* user_data,
                                     gsf_on_drop drop, uint64_t event_id, MessageOrigin origin) {
  return continuations_.Add(Continuation{plugin, op, then, user_data, drop, event_id, std::move(origin)});
}

CallResult ResultHost::Continue(uint64_t id, const EventContext& event, const ResultAnswer& answer, PluginEffects* effects) {
  Continuation c;
  if (!continuations_.Take(id, &c)) return Missing("result continuation", id);
  gsf_type_call_result result = ResultOf(c.op, answer);
  CallScope scope(c.plugin, effects, &event, false, &c.origin);
  gsf_type_status status = RunHook(scope, [&] { return c.fn(scope.call(), &result, c.user_data); });
  CallResult r = Finish(scope.state(), status);
  AnswersOrigin(r, c.origin);
  ReleaseData(c.drop, c.user_data);
  return r;
}

uint64_t ResultHost::AddTransaction(const NativePlugin* plugin, gsf_on_transaction fn, gsf_on_result done, void* user_data,
                                    gsf_on_drop drop) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t key = next_transaction_++;
  transactions_[key] = Transaction{plugin, fn, done, user_data, drop};
  return key;
}

void ResultHost::ForgetTransaction(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  transactions_.erase(key);
}

CallResult ResultHost::RunTransaction(uint64_t key, const EventContext& event, PluginEffects* effects) {
  Transaction t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = transactions_.find(key);
    if (it == transactions_.end()) return CallResult{};  // ended with its copy, or at shutdown
    it->second.running++;
    t = it->second;
  }
  std::string name = Host().runtime().names.NameOf(event.name_id);
  gsf_type_event_info info = EventInfo(event, name);
  CallResult r;
  {
    CallScope scope(t.plugin, effects, &event, false);
    gsf_type_status status = RunHook(scope, [&] { return t.fn(scope.call(), &info, t.user_data); });
    r = Finish(scope.state(), status);
  }
  Transaction revoked;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = transactions_.find(key);
    if (it == transactions_.end()) return r;
    if (--it->second.running > 0 || !it->second.revoked) return r;
    revoked = it->second;
    transactions_.erase(it);
  }
  ReleaseData(revoked.drop, revoked.user_data);  // its event timed out while the body ran
  return r;
}

CallResult ResultHost::FinishTransaction(uint64_t key, const EventContext& event, const ResultAnswer& answer,
                                         PluginEffects* effects) {
  Transaction t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = transactions_.find(key);
    if (it == transactions_.end()) return CallResult{};
    t = it->second;
    transactions_.erase(it);
  }
  CallResult r;
  if (t.done) {
    gsf_type_call_result result = ResultOf(GSF_CALL_TRANSACTION, answer);
    CallScope scope(t.plugin, effects, &event, false);
    gsf_type_status status = RunHook(scope, [&] { return t.done(scope.call(), &result, t.user_data); });
    r = Finish(scope.state(), status);
  } else if (answer.status != GSF_STATUS_OK) {
    // Nobody hears of the failure: the event fails with it (logged).
    r.status = answer.status;
    r.error = std::string(answer.code) + ": " + std::string(answer.message);
  }
  ReleaseData(t.drop, t.user_data);
  return r;
}

void ResultHost::DropTransaction(uint64_t key) {
  Transaction t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = transactions_.find(key);
    if (it == transactions_.end()) return;
    t = it->second;
    transactions_.erase(it);
  }
  ReleaseData(t.drop, t.user_data);
}

void ResultHost::BindTransactionEvent(uint64_t key, uint64_t event_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = transactions_.find(key);
  if (it != transactions_.end()) it->second.event_id = event_id;
}

void ResultHost::RevokeTransactionOf(uint64_t event_id) {
  if (event_id == 0) return;
  Transaction t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = transactions_.begin();
    while (it != transactions_.end() && it->second.event_id != event_id) ++it;
    if (it == transactions_.end()) return;
    if (it->second.running > 0) {
      it->second.revoked = true;
      return;
    }
    t = it->second;
    transactions_.erase(it);
  }
  ReleaseData(t.drop, t.user_data);
}

size_t ResultHost::EndTransactionsOf(const NativePlugin* plugin) {
  std::vector<Transaction> ended;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = transactions_.begin(); it != transactions_.end();) {
      // One whose body runs now is released when its event finishes it.
      if ((plugin == nullptr || it->second.plugin == plugin) && it->second.running == 0) {
        ended.push_back(it->second);
        it = transactions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const Transaction& t : ended) ReleaseData(t.drop, t.user_data);
  return ended.size();
}

size_t ResultHost::TransactionCount() {
  std::lock_guard<std::mutex> lock(mu_);
  return transactions_.size();
}

NativeDeclarations& ResultHost::Declarations(const NativePlugin* plugin) {
  std::lock_guard<std::mutex> lock(mu_);
  return declarations_[plugin];
}

const NativeDeclarations* ResultHost::FindDeclarations(const NativePlugin* plugin) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = declarations_.find(plugin);
  return it == declarations_.end() ? nullptr : &it->second;
}

uint32_t ResultHost::AddCallable(const NativePlugin* plugin, std::string_view category, std::string_view name,
                                 std::string_view description, gsf_on_counter fn, void* user_data, gsf_on_drop drop) {
  std::lock_guard<std::mutex> lock(mu_);
  if (callables_.size() >= kMaxCallables) return UINT32_MAX;
  callables_.push_back(Callable{plugin, std::string(category), std::string(name), std::string(description), fn, user_data, drop});
  auto index = static_cast<uint32_t>(callables_.size() - 1);
  declarations_[plugin].callables.push_back(index);
  return index;
}

bool ResultHost::CallableInfo(uint32_t index, std::string* category, std::string* name, std::string* description) {
  std::lock_guard<std::mutex> lock(mu_);
  if (index >= callables_.size()) return false;
  const Callable& c = callables_[index];
  *category = c.category;
  *name = c.name;
  *description = c.description;
  return true;
}

int ResultHost::ReadCallable(uint32_t index, double* value, std::string* error) {
  Callable c;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (index >= callables_.size() || callables_[index].released) return 0;
    c = callables_[index];
  }
  double v = 0;
  gsf_type_status status;
  try {
    status = c.fn(Borrow(c.category), Borrow(c.name), &v, c.user_data);
  } catch (...) {
    status = GSF_STATUS_INTERNAL;
  }
  if (status == GSF_STATUS_NOT_FOUND) return 0;
  if (status != GSF_STATUS_OK) {
    *error = std::string("callable counter ") + c.category + "/" + c.name + " of plugin '" + c.plugin->name + "' returned " +
             gsf_status_name(status);
    return -1;
  }
  if (!std::isfinite(v)) {
    *error = std::string("callable counter ") + c.category + "/" + c.name + " of plugin '" + c.plugin->name +
             "' gave a value that is not finite";
    return -1;
  }
  *value = v;
  return 1;
}

size_t ResultHost::ReleaseCallables(const NativePlugin* plugin) {
  std::vector<std::pair<gsf_on_drop, void*>> drops;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Callable& c : callables_) {
      if ((plugin == nullptr || c.plugin == plugin) && !c.released) {
        c.released = true;
        drops.emplace_back(c.drop, c.user_data);
      }
    }
  }
  for (auto& [drop, data] : drops) ReleaseData(drop, data);
  return drops.size();
}

void ResultHost::ForgetPlugin(const NativePlugin* plugin) {
  std::lock_guard<std::mutex> lock(mu_);
  declarations_.erase(plugin);
  for (Callable& c : callables_) {
    if (c.plugin == plugin) c.plugin = nullptr;
  }
}

ResultHost& ProcessResultHost() {
  static ResultHost* host = new ResultHost();  // never destroyed: event threads may outlive exit
  return *host;
}

}  // namespace gsf
