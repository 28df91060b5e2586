// gsf_plugin.hpp: a thin header-only C++17 layer over gsf_plugin.h, covering the whole host table.
//
//   #include "gsf_plugin.hpp"
//   using namespace gsf::plugin;
//   static void Init(Registrar& r) {
//     r.on_message("hello", [](Event& ev) { ev.reply(Writer().string("hi")); });
//   }
//   GSF_PLUGIN_CPP("hello", "1.0.0", Init);
//
// Handlers and continuations are lambdas (kept as their own types: every hook is a static
// trampoline instantiated for the lambda, so no std::function and no virtual call sits on the
// hot path). They fail by throwing: gsf::plugin::Error carries a status and a message; any other
// exception becomes GSF_STATUS_INTERNAL with its what(). The trampolines catch everything, so no
// exception unwinds into gsf. Host services that fail throw Error with the host's status (its
// message is already on the call); response writers return their status instead.
//
// What gsf holds for the plugin is owned: a continuation's or a timer's lambda is freed through
// the gsf_on_drop destructor exactly once (ran, failed, timed out or dropped), and a Timer
// handle cancels its timer when it goes out of scope unless detach()ed.
//
// The parts: this file (errors, msgpack, host services without a call); gsf_plugin_types.hpp
// (views of what gsf passes: event info, objects, sessions, answers); gsf_plugin_call.hpp (Call
// and Event: what acts on behalf of a call); gsf_plugin_register.hpp (init's Registrar: events,
// messages, routes, the console, session and timeout hooks, flags, counters, the plugin macros).
#pragma once

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gsf_msgpack.h"
#include "gsf_plugin.h"

namespace gsf::plugin {

using Status = gsf_type_status;

/** Fails a handler with `status`; an empty message keeps the one a host service set. */
class Error : public std::exception {
 public:
  explicit Error(Status status, std::string message = {}) : status_(status), message_(std::move(message)) {}
  Status status() const { return status_; }
  const char* what() const noexcept override { return message_.empty() ? gsf_status_name(status_) : message_.c_str(); }
  bool has_message() const { return !message_.empty(); }

 private:
  Status status_;
  std::string message_;
};

inline gsf_type_borrowed_str Str(std::string_view s) { return gsf_type_borrowed_str{s.data(), s.size()}; }
inline std::string_view View(gsf_type_borrowed_str s) { return std::string_view(s.ptr ? s.ptr : "", s.len); }

/** The host table, set before init runs. */
inline const gsf_type_host_api*& HostApi() {
  static const gsf_type_host_api* api = nullptr;
  return api;
}

/** Throws Error for a failed host service. */
inline void Check(Status status) {
  if (status != GSF_STATUS_OK) throw Error(status);
}

/** How an event fetches an object (GSF_OBJECT_*). */
enum class Mode : uint32_t { read = GSF_OBJECT_READ, write = GSF_OBJECT_WRITE };

/** An owned msgpack buffer; every write returns *this for chaining. */
class Writer {
 public:
  Writer() { gsf_mp_writer_init(&w_); }
  ~Writer() { gsf_mp_writer_free(&w_); }
  Writer(Writer&& o) noexcept : w_(o.w_) { gsf_mp_writer_init(&o.w_); }
  Writer& operator=(Writer&&) = delete;
  Writer(const Writer&) = delete;

  Writer& nil() { return Ok(gsf_mp_write_nil(&w_)); }
  Writer& boolean(bool v) { return Ok(gsf_mp_write_bool(&w_, v)); }
  Writer& integer(int64_t v) { return Ok(gsf_mp_write_int(&w_, v)); }
  Writer& number(double v) { return Ok(gsf_mp_write_double(&w_, v)); }
  Writer& string(std::string_view v) { return Ok(gsf_mp_write_str(&w_, v.data(), v.size())); }
  Writer& binary(const void* p, size_t n) { return Ok(gsf_mp_write_bin(&w_, p, n)); }
  Writer& array(uint32_t n) { return Ok(gsf_mp_write_array(&w_, n)); }
  Writer& map(uint32_t n) { return Ok(gsf_mp_write_map(&w_, n)); }
  Writer& raw(gsf_type_borrowed_bytes value) { return Ok(gsf_mp_write_raw(&w_, value)); }
  /** A point in time (milliseconds since the Unix epoch) as a msgpack timestamp: a datetime field, a JavaScript Date. */
  Writer& timestamp(int64_t ms) {
    int64_t sec = ms / 1000, rem = ms % 1000;
    if (rem < 0) rem += 1000, sec -= 1;
    uint8_t b[15] = {0xc7, 12, 0xff};
    uint32_t ns = static_cast<uint32_t>(rem) * 1000000u;
    for (int i = 0; i < 4; i++) b[3 + i] = static_cast<uint8_t>(ns >> (24 - 8 * i));
    for (int i = 0; i < 8; i++) b[7 + i] = static_cast<uint8_t>(static_cast<uint64_t>(sec) >> (56 - 8 * i));
    return raw(gsf_bytes(b, sizeof b));
  }
  /** A key and a value of a map, `key` a string: w.field("score").integer(3). */
  Writer& field(std::string_view key) { return string(key); }
  gsf_type_borrowed_bytes bytes() const { return gsf_mp_writer_bytes(&w_); }
  void clear() { gsf_mp_writer_reset(&w_); }

 private:
  Writer& Ok(int ok) {
    if (!ok) throw std::bad_alloc();
    return *this;
  }
  gsf_mp_writer w_;
};

/** Reads msgpack borrowed from the host (valid during the handler only). */
class Reader {
 public:
  explicit Reader(gsf_type_borrowed_bytes b) { gsf_mp_reader_init(&r_, b.ptr, b.len); }
  int type() const { return gsf_mp_next_type(&r_); }
  bool empty() const { return r_.p == r_.end; }
  bool at_end() const { return gsf_mp_at_end(&r_) != 0; }
  bool nil() { return gsf_mp_read_nil(&r_) != 0; }
  std::optional<bool> boolean() { int v; return gsf_mp_read_bool(&r_, &v) ? std::optional<bool>(v != 0) : std::nullopt; }
  std::optional<int64_t> integer() { int64_t v; return gsf_mp_read_int(&r_, &v) ? std::optional<int64_t>(v) : std::nullopt; }
  std::optional<double> number() { double v; return gsf_mp_read_double(&r_, &v) ? std::optional<double>(v) : std::nullopt; }
  std::optional<std::string_view> string() {
    gsf_type_borrowed_str s;
    return gsf_mp_read_str(&r_, &s) ? std::optional<std::string_view>(std::string_view(s.ptr, s.len)) : std::nullopt;
  }
  std::optional<uint32_t> array() { uint32_t n; return gsf_mp_read_array(&r_, &n) ? std::optional<uint32_t>(n) : std::nullopt; }
  std::optional<uint32_t> map() { uint32_t n; return gsf_mp_read_map(&r_, &n) ? std::optional<uint32_t>(n) : std::nullopt; }
  bool skip() { return gsf_mp_skip(&r_) != 0; }
  /** The next value's msgpack bytes (to copy or pass on), moving past it. */
  std::optional<gsf_type_borrowed_bytes> value() {
    const uint8_t* start = r_.p;
    if (!gsf_mp_skip(&r_)) return std::nullopt;
    return gsf_bytes(start, static_cast<size_t>(r_.p - start));
  }
  /** The value of `key` in the map this reader is at, without moving this reader. */
  std::optional<Reader> find(const char* key) const {
    Reader value(gsf_bytes(nullptr, 0));
    return gsf_mp_map_find(&r_, key, &value.r_) ? std::optional<Reader>(value) : std::nullopt;
  }
  /** Shorthands for a field of the map this reader is at (std::nullopt: absent or another type). */
  std::optional<int64_t> integer(const char* key) const { auto v = find(key); return v ? v->integer() : std::nullopt; }
  std::optional<std::string_view> string(const char* key) const { auto v = find(key); return v ? v->string() : std::nullopt; }
  std::optional<bool> boolean(const char* key) const { auto v = find(key); return v ? v->boolean() : std::nullopt; }

 private:
  gsf_mp_reader r_;
};

/** Invoke options: tag and name of the new event (defaults: SPEC 6.2.4). */
struct Invoke {
  gsf_type_invoke_options o = gsf_invoke_options();
  Invoke& tag(uint64_t t) { o.tag_mode = GSF_TAG_MODE_VALUE; o.tag = t; return *this; }
  Invoke& named_tag(std::string_view n) { o.tag_mode = GSF_TAG_MODE_NAMED; o.tag_name = Str(n); return *this; }
  Invoke& random_tag() { o.tag_mode = GSF_TAG_MODE_RANDOM; return *this; }
  Invoke& name(std::string_view n) { o.name = Str(n); return *this; }
};

/** Borrowed strings for the host's array arguments (kept alive by the caller's views). */
inline std::vector<gsf_type_borrowed_str> Strs(std::initializer_list<std::string_view> items) {
  std::vector<gsf_type_borrowed_str> out;
  out.reserve(items.size());
  for (std::string_view s : items) out.push_back(Str(s));
  return out;
}
template <typename Container>
std::vector<gsf_type_borrowed_str> Strs(const Container& items) {
  std::vector<gsf_type_borrowed_str> out;
  for (const auto& s : items) out.push_back(Str(std::string_view(s)));
  return out;
}

/** Counters, tags, flags, timers and logs: services that need no running event. */
namespace host {
inline void counter_define(std::string_view category, std::string_view name, std::string_view description,
                           double initial = 0, bool is_double = false) {
  Check(HostApi()->counter_define(Str(category), Str(name), Str(description), initial, is_double));
}
inline double counter_increase(std::string_view category, std::string_view name, double amount = 1) {
  double v = 0;
  Check(HostApi()->counter_increase(Str(category), Str(name), amount, &v));
  return v;
}
inline void counter_update(std::string_view category, std::string_view name, double value, bool is_double = false) {
  Check(HostApi()->counter_update(Str(category), Str(name), value, is_double));
}
inline std::optional<double> counter_read(std::string_view category, std::string_view name) {
  double v;
  return HostApi()->counter_read(Str(category), Str(name), &v) == GSF_STATUS_OK ? std::optional<double>(v) : std::nullopt;
}
inline uint64_t named_tag(std::string_view name) { return HostApi()->tag_named(Str(name)); }
inline uint64_t random_tag() { return HostApi()->tag_random(); }
/** A flag's value, decoded by `read` from its msgpack (the buffer is released after). */
template <typename F>
auto flag(std::string_view name, F&& read) -> std::optional<decltype(read(std::declval<Reader&>()))> {
  gsf_type_host_bytes bytes{nullptr, 0};
  if (HostApi()->flag_get(Str(name), &bytes) != GSF_STATUS_OK) return std::nullopt;
  struct Release {
    uint8_t* p;
    ~Release() { HostApi()->mem_free(p); }
  } release{bytes.ptr};
  Reader r(gsf_bytes(bytes.ptr, bytes.len));
  return read(r);
}
/** Cancels a timer by id; false if it is unknown or a one-shot that fired. */
inline bool timer_cancel(uint64_t timer_id) { return HostApi()->timer_cancel(timer_id) == GSF_STATUS_OK; }
/** A log line outside any call (written at once). */
inline void log(int32_t level, std::string_view text) { HostApi()->log(gsf_no_call(), level, Str(text)); }
}  // namespace host

/**
 * A timer's handle: cancels the timer when it goes out of scope, unless detach()ed (gsf then
 * ends it itself at reload or shutdown, releasing what it holds). Move-only.
 */
class Timer {
 public:
  Timer() = default;
  explicit Timer(uint64_t id) : id_(id) {}
  Timer(Timer&& o) noexcept : id_(std::exchange(o.id_, 0)) {}
  Timer& operator=(Timer&& o) noexcept {
    if (this != &o) {
      cancel();
      id_ = std::exchange(o.id_, 0);
    }
    return *this;
  }
  Timer(const Timer&) = delete;
  ~Timer() { cancel(); }
  uint64_t id() const { return id_; }
  explicit operator bool() const { return id_ != 0; }
  /** Cancels now; false if it had already ended (a one-shot that fired) or there is none. */
  bool cancel() { return id_ != 0 && host::timer_cancel(std::exchange(id_, 0)); }
  /** Lets the timer run on without this handle; returns its id. */
  uint64_t detach() { return std::exchange(id_, 0); }

 private:
  uint64_t id_ = 0;
};

namespace detail {

/** Runs `fn`; what it throws becomes a status and a message on `call`. Nothing escapes. */
template <typename F>
Status Guard(gsf_type_call call, F&& fn) noexcept {
  try {
    using R = decltype(fn());
    if constexpr (std::is_void_v<R>) {
      fn();
      return GSF_STATUS_OK;
    } else {
      return static_cast<Status>(fn());
    }
  } catch (const Error& e) {
    if (e.has_message()) HostApi()->set_error(call, gsf_str(e.what()));
    return e.status();
  } catch (const std::bad_alloc&) {
    HostApi()->set_error(call, gsf_str("out of memory"));
    return GSF_STATUS_RESOURCE_EXHAUSTED;
  } catch (const std::exception& e) {
    HostApi()->set_error(call, gsf_str(e.what()));
    return GSF_STATUS_INTERNAL;
  } catch (...) {
    HostApi()->set_error(call, gsf_str("a non-standard exception"));
    return GSF_STATUS_INTERNAL;
  }
}

/** The gsf_on_drop of a lambda of type Fn that gsf holds. */
template <typename Fn>
void Drop(void* user_data) noexcept {
  delete static_cast<Fn*>(user_data);
}

/**
 * Hands a copy of `fn` to gsf through `submit(user_data, drop)`; on a status other than OK gsf
 * kept nothing, so the copy is freed here and Error is thrown.
 */
template <typename F, typename Submit>
void Hand(F&& fn, Submit&& submit) {
  using Fn = std::decay_t<F>;
  std::unique_ptr<Fn> held(new Fn(std::forward<F>(fn)));
  Status s = submit(static_cast<void*>(held.get()), &Drop<Fn>);
  if (s != GSF_STATUS_OK) throw Error(s);
  held.release();  // gsf owns it now, and frees it through Drop<Fn>
}

}  // namespace detail
}  // namespace gsf::plugin

#include "gsf_plugin_types.hpp"     // NOLINT: the parts, in order
#include "gsf_plugin_call.hpp"      // NOLINT
#include "gsf_plugin_register.hpp"  // NOLINT
