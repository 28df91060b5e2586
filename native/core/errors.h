// Error types the core throws; the binding turns each into a JS error whose `code` is the
// type's kCode. The codes are entries of gsf's one error table (src/errors.ts); a test checks
// that every code here is in that table.
#pragma once

#include <stdexcept>
#include <string>

namespace gsf {

/** A value is out of its allowed range (bad slot index, bad count, ...). */
class ArgumentError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
  static constexpr const char* kCode = "GSF_ERR_NATIVE_ARGUMENT";
};

/** The call is not valid in the current state (take with an open claim, no free slot, ...). */
class StateError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
  static constexpr const char* kCode = "GSF_ERR_NATIVE_STATE";
};

/** Codes of failures that have no exception type of their own. */
constexpr const char* kErrMemoryCode = "GSF_ERR_NATIVE_MEMORY";
constexpr const char* kErrInternalCode = "GSF_ERR_NATIVE";

}  // namespace gsf
