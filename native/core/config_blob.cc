#include "config_blob.h"

#include <utility>

namespace gsf {

void ConfigBlob::Set(std::string text) {
  std::lock_guard<std::mutex> lock(mu_);
  text_ = std::move(text);
  // Bumped under the lock so a reader that sees the new version also sees the new text.
  version_.fetch_add(1, std::memory_order_acq_rel);
}

std::string ConfigBlob::Get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return text_;
}

}  // namespace gsf
