#include "name_table.h"

#include <mutex>

#include "errors.h"

namespace gsf {

uint32_t NameTable::Intern(std::string_view name) {
  {
    // Names are interned once and looked up many times: stay on the shared lock.
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  if (names_.size() >= UINT32_MAX - 1) throw StateError("name table is full");
  names_.emplace_back(name);
  uint32_t id = static_cast<uint32_t>(names_.size());
  ids_.emplace(std::string_view(names_.back()), id);
  return id;
}

uint32_t NameTable::InternEventName(std::string_view name) {
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    if (event_names_ >= kMaxEventNames) {
      auto other = ids_.find(kOtherEventNames);
      if (other != ids_.end()) return other->second;
    }
  }
  std::string_view wanted = name;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    if (event_names_ < kMaxEventNames) {
      if (names_.size() >= UINT32_MAX - 1) throw StateError("name table is full");
      ++event_names_;
      names_.emplace_back(name);
      uint32_t id = static_cast<uint32_t>(names_.size());
      ids_.emplace(std::string_view(names_.back()), id);
      return id;
    }
    wanted = kOtherEventNames;
  }
  return Intern(wanted);
}

std::string NameTable::ChildName(std::string_view parent, uint64_t n) {
  std::string child(parent);
  child += "_#";
  child += std::to_string(n);
  // A chain that keeps creating events would otherwise grow its names with every link.
  return child.size() <= kMaxEventNameBytes ? child : std::string(parent);
}

uint32_t NameTable::Find(std::string_view name) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = ids_.find(name);
  return it == ids_.end() ? 0 : it->second;
}

std::string NameTable::NameOf(uint32_t id) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (id == 0 || id > names_.size()) return std::string();
  return names_[id - 1];
}

size_t NameTable::Size() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return names_.size();
}

}  // namespace gsf
