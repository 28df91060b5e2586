#include "session_accounts.h"

#include <mutex>

namespace gsf {

void SessionAccounts::Set(uint64_t session, std::string_view account) {
  std::unique_lock lock(mu_);
  accounts_[session].assign(account);
}

void SessionAccounts::Erase(uint64_t session) {
  std::unique_lock lock(mu_);
  accounts_.erase(session);
}

bool SessionAccounts::Get(uint64_t session, std::string* account) const {
  std::shared_lock lock(mu_);
  auto it = accounts_.find(session);
  if (it == accounts_.end()) return false;
  account->assign(it->second);
  return true;
}

size_t SessionAccounts::Size() const {
  std::shared_lock lock(mu_);
  return accounts_.size();
}

SessionAccounts& ProcessSessionAccounts() {
  static SessionAccounts* table = new SessionAccounts();  // never destroyed: workers may outlive main's statics
  return *table;
}

}  // namespace gsf
