// The account each session of this process is logged in as, for native handlers' account_of
// answered inside their call (binding/in_call_answers.cc).
#pragma once

#include <atomic>
#include <cstdint>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gsf {

/**
 * Session id -> account, written by the main thread of the server that owns the session as its
 * account manager binds and unbinds logins (src/session/main/accounts.ts), read by any thread.
 * Session ids are random 53-bit tags, so the servers of one process share the table without
 * colliding. It mirrors only this server's own logins: a session it does not hold may still be
 * logged in elsewhere in the cluster, which only the account manager can tell.
 */
class SessionAccounts {
 public:
  /** Binds `session` to `account`. */
  void Set(uint64_t session, std::string_view account);
  /** Unbinds `session`. */
  void Erase(uint64_t session);
  /** The account of `session` into `*account`; false when this table has none. */
  bool Get(uint64_t session, std::string* account) const;
  size_t Size() const;
  /**
   * Counts a login or logout an event thread has sent the account manager (+1) and its answer
   * (-1). While any is on its way this table may be behind what a later event of the same
   * session must see (an earlier message's logout, not waited for), so no answer is taken from it.
   */
  void Changing(int delta) { changing_.fetch_add(delta, std::memory_order_acq_rel); }
  bool Changing() const { return changing_.load(std::memory_order_acquire) != 0; }

 private:
  std::atomic<int64_t> changing_{0};
  mutable std::shared_mutex mu_;
  std::unordered_map<uint64_t, std::string> accounts_;
};

SessionAccounts& ProcessSessionAccounts();

}  // namespace gsf
