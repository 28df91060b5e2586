// The JS <-> C++ boundary: argument readers and the exception guard.
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "../core/errors.h"

namespace gsf::binding {

/** Codes carried by the `code` property of errors thrown by the addon (core/errors.h). */
constexpr const char* kErrArgument = gsf::ArgumentError::kCode;
constexpr const char* kErrState = gsf::StateError::kCode;
constexpr const char* kErrMemory = gsf::kErrMemoryCode;
constexpr const char* kErrInternal = gsf::kErrInternalCode;

enum class ErrorKind { kError, kTypeError, kRangeError };

[[noreturn]] void ThrowCoded(Napi::Env env, ErrorKind kind, const char* code, const std::string& message);

/** Largest integer a JS number holds exactly; ids and tags stay below it. */
constexpr double kMaxSafeInteger = 9007199254740991.0;

/** Any number. Raw N-API calls keep the per-argument cost of the hot calls low. */
double NumberArg(const Napi::CallbackInfo& info, size_t i, const char* what);
/** An integer in [min, max]. */
double IntegerArg(const Napi::CallbackInfo& info, size_t i, const char* what, double min, double max);
inline uint64_t UintArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  return static_cast<uint64_t>(IntegerArg(info, i, what, 0, kMaxSafeInteger));
}
inline uint32_t IdArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  return static_cast<uint32_t>(IntegerArg(info, i, what, 0, 4294967295.0));
}
bool BoolArg(const Napi::CallbackInfo& info, size_t i, const char* what);
/** A string argument, or "" for null or undefined (or a missing argument). */
std::string OptionalString(const Napi::CallbackInfo& info, size_t i, const char* what);

/** A UTF-8 copy of a string argument; short strings avoid the heap. */
class Utf8Arg {
 public:
  Utf8Arg(const Napi::CallbackInfo& info, size_t i, const char* what);
  std::string_view view() const { return {data_, size_}; }
  std::string str() const { return std::string(data_, size_); }

 private:
  char inline_[128];
  std::string heap_;
  const char* data_ = inline_;
  size_t size_ = 0;
};

struct ByteView {
  uint8_t* data = nullptr;
  size_t length = 0;
};

/** A Uint8Array (or Buffer); with `nullable`, null and undefined give an empty view. */
ByteView BytesArg(const Napi::CallbackInfo& info, size_t i, const char* what, bool nullable);

struct DoubleView {
  double* data = nullptr;
  size_t length = 0;
};

DoubleView Float64Arg(const Napi::CallbackInfo& info, size_t i, const char* what);

using Handler = Napi::Value (*)(const Napi::CallbackInfo&);

/** Turns core exceptions into coded JS errors; JS errors pass through untouched. */
template <Handler F>
Napi::Value Guard(const Napi::CallbackInfo& info) {
  try {
    return F(info);
  } catch (const Napi::Error&) {
    throw;
  } catch (const gsf::ArgumentError& e) {
    ThrowCoded(info.Env(), ErrorKind::kRangeError, kErrArgument, e.what());
  } catch (const gsf::StateError& e) {
    ThrowCoded(info.Env(), ErrorKind::kError, kErrState, e.what());
  } catch (const std::bad_alloc&) {
    ThrowCoded(info.Env(), ErrorKind::kError, kErrMemory, "out of memory");
  } catch (const std::exception& e) {
    ThrowCoded(info.Env(), ErrorKind::kError, kErrInternal, e.what());
  }
}

/** Exports `F` as `name`, behind Guard. */
template <Handler F>
void Export(Napi::Env env, Napi::Object exports, const char* name) {
  exports.Set(name, Napi::Function::New<Guard<F>>(env, name));
}

}  // namespace gsf::binding
