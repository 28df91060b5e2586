#include "boundary.h"

#include <cmath>

namespace gsf::binding {

void ThrowCoded(Napi::Env env, ErrorKind kind, const char* code, const std::string& message) {
  std::string text = "gsf native: " + message;
  Napi::Error err = kind == ErrorKind::kTypeError    ? Napi::TypeError::New(env, text)
                    : kind == ErrorKind::kRangeError ? Napi::RangeError::New(env, text)
                                                     : Napi::Error::New(env, text);
  err.Set("code", Napi::String::New(env, code));
  throw err;
}

namespace {

[[noreturn]] void ThrowType(Napi::Env env, const char* what, const char* expected) {
  ThrowCoded(env, ErrorKind::kTypeError, kErrArgument, std::string(what) + " must be " + expected);
}

}  // namespace

double NumberArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  double v;
  if (napi_get_value_double(info.Env(), info[i], &v) != napi_ok) ThrowType(info.Env(), what, "a number");
  return v;
}

double IntegerArg(const Napi::CallbackInfo& info, size_t i, const char* what, double min, double max) {
  double v = NumberArg(info, i, what);
  if (!(v >= min && v <= max) || std::trunc(v) != v) {
    ThrowCoded(info.Env(), ErrorKind::kRangeError, kErrArgument,
               std::string(what) + " must be an integer in [" + std::to_string(static_cast<int64_t>(min)) + ", " +
                   std::to_string(static_cast<int64_t>(max)) + "]");
  }
  return v;
}

bool BoolArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  bool v;
  if (napi_get_value_bool(info.Env(), info[i], &v) != napi_ok) ThrowType(info.Env(), what, "a boolean");
  return v;
}

std::string OptionalString(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (i >= info.Length() || info[i].IsNull() || info[i].IsUndefined()) return std::string();
  if (!info[i].IsString()) ThrowCoded(info.Env(), ErrorKind::kTypeError, kErrArgument, std::string(what) + " must be a string or null");
  return info[i].As<Napi::String>().Utf8Value();
}

Utf8Arg::Utf8Arg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  napi_env env = info.Env();
  napi_value value = info[i];
  size_t len;
  if (napi_get_value_string_utf8(env, value, inline_, sizeof inline_, &len) != napi_ok) {
    ThrowType(info.Env(), what, "a string");
  }
  // N-API never splits a UTF-8 sequence, so a cut-short result can end up to
  // four bytes before the buffer's end; only a shorter one is surely whole.
  if (len + 4 < sizeof inline_) {
    size_ = len;
    return;
  }
  napi_get_value_string_utf8(env, value, nullptr, 0, &len);
  heap_.resize(len);
  napi_get_value_string_utf8(env, value, heap_.data(), len + 1, &len);
  data_ = heap_.data();
  size_ = len;
}

ByteView BytesArg(const Napi::CallbackInfo& info, size_t i, const char* what, bool nullable) {
  napi_env env = info.Env();
  napi_value value = info[i];
  napi_typedarray_type type;
  size_t length;
  void* data;
  if (napi_get_typedarray_info(env, value, &type, &length, &data, nullptr, nullptr) == napi_ok &&
      type == napi_uint8_array) {
    return ByteView{static_cast<uint8_t*>(data), length};
  }
  if (nullable) {
    napi_valuetype vt;
    if (napi_typeof(env, value, &vt) == napi_ok && (vt == napi_null || vt == napi_undefined)) return ByteView{};
  }
  ThrowType(info.Env(), what, nullable ? "a Uint8Array or null" : "a Uint8Array");
}

DoubleView Float64Arg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  napi_typedarray_type type;
  size_t length;
  void* data;
  if (napi_get_typedarray_info(info.Env(), info[i], &type, &length, &data, nullptr, nullptr) != napi_ok ||
      type != napi_float64_array) {
    ThrowType(info.Env(), what, "a Float64Array");
  }
  return DoubleView{static_cast<double*>(data), length};
}

}  // namespace gsf::binding
