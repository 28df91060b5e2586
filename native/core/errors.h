// Error types the core throws; the binding maps each to a coded JS error.
#pragma once

#include <stdexcept>
#include <string>

namespace gsf {

/** A value is out of its allowed range (bad slot index, bad count, ...). */
class ArgumentError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/** The call is not valid in the current state (take with an open claim, no free slot, ...). */
class StateError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace gsf
