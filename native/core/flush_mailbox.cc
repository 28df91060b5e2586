#include "flush_mailbox.h"

namespace gsf {

bool FlushMailbox::Post(const FlushNote& note) {
  std::lock_guard<std::mutex> lock(mu_);
  notes_.push_back(note);
  return notes_.size() == 1;
}

std::vector<FlushNote> FlushMailbox::Take() {
  std::vector<FlushNote> out;
  std::lock_guard<std::mutex> lock(mu_);
  out.swap(notes_);
  return out;
}

size_t FlushMailbox::Size() {
  std::lock_guard<std::mutex> lock(mu_);
  return notes_.size();
}

}  // namespace gsf
