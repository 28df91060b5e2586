// gsf_plugin.hpp: a thin header-only C++17 layer over gsf_plugin.h.
//
//   #include "gsf_plugin.hpp"
//   using namespace gsf::plugin;
//   static void Init(Registrar& r) {
//     r.on_message("hello", [](Event& ev) { ev.reply(Writer().string("hi")); });
//   }
//   GSF_PLUGIN_CPP("hello", "1.0.0", Init);
//
// Handlers are lambdas taking Event&. They fail by throwing: gsf::plugin::Error carries a
// status and a message; any other exception becomes GSF_STATUS_INTERNAL with its what(). The
// trampolines catch everything, so no exception unwinds into gsf. Host services that fail
// throw Error with the host's status (its message is already on the call).
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

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

/** The host table, set before init runs. */
inline const gsf_type_host_api*& HostApi() {
  static const gsf_type_host_api* api = nullptr;
  return api;
}

/** Throws Error for a failed host service. */
inline void Check(Status status) {
  if (status != GSF_STATUS_OK) throw Error(status);
}

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
  gsf_type_borrowed_bytes bytes() const { return gsf_mp_writer_bytes(&w_); }

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
  /** The value of `key` in the map this reader is at, without moving this reader. */
  std::optional<Reader> find(const char* key) const {
    Reader value(gsf_bytes(nullptr, 0));
    return gsf_mp_map_find(&r_, key, &value.r_) ? std::optional<Reader>(value) : std::nullopt;
  }

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

/** Counters, tags, flags and logs: services that need no running event. */
namespace host {
inline void counter_define(std::string_view category, std::string_view name, std::string_view description,
                           double initial = 0) {
  Check(HostApi()->counter_define(Str(category), Str(name), Str(description), initial, 0));
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
}  // namespace host

/** The event a handler runs for, and the services that act on its behalf. */
class Event {
 public:
  Event(gsf_type_call call, const gsf_type_event_info* info, gsf_type_borrowed_bytes payload)
      : call_(call), info_(info), payload_(payload) {}

  uint64_t id() const { return info_->event_id; }
  uint64_t tag() const { return info_->tag; }
  uint64_t session() const { return info_->session_id; }
  uint32_t kind() const { return info_->kind; }
  std::string_view name() const { return std::string_view(info_->name.ptr, info_->name.len); }
  /** The payload, or a message handler's body. */
  Reader payload() const { return Reader(payload_); }
  gsf_type_borrowed_bytes raw_payload() const { return payload_; }
  gsf_type_call call() const { return call_; }

  /** Answers the message (its type unless `type` is given). */
  void reply(const Writer& body, std::string_view type = {}) const { Check(HostApi()->reply(call_, Str(type), body.bytes())); }
  void send(uint64_t session, std::string_view type, const Writer& body) const {
    Check(HostApi()->send(call_, session, Str(type), body.bytes()));
  }
  void publish(std::string_view group, std::string_view type, const Writer& body) const {
    Check(HostApi()->publish(call_, Str(group), Str(type), body.bytes()));
  }
  uint64_t invoke(std::string_view event, const Writer* payload = nullptr, const Invoke& options = Invoke()) const {
    uint64_t id = 0;
    Check(HostApi()->invoke(call_, Str(event), payload ? payload->bytes() : gsf_bytes(nullptr, 0), &options.o, &id));
    return id;
  }
  uint64_t after(double ms, std::string_view event, const Writer* payload = nullptr) const {
    uint64_t id = 0;
    Check(HostApi()->timer_after(call_, ms, Str(event), payload ? payload->bytes() : gsf_bytes(nullptr, 0), &id));
    return id;
  }
  uint64_t every(double ms, std::string_view event, const Writer* payload = nullptr) const {
    uint64_t id = 0;
    Check(HostApi()->timer_every(call_, ms, Str(event), payload ? payload->bytes() : gsf_bytes(nullptr, 0), &id));
    return id;
  }
  void log(int32_t level, std::string_view text) const { HostApi()->log(call_, level, Str(text)); }

 private:
  gsf_type_call call_;
  const gsf_type_event_info* info_;
  gsf_type_borrowed_bytes payload_;
};

namespace detail {

/** Runs `fn`; what it throws becomes a status and a message. Nothing escapes. */
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

template <typename F>
Status Trampoline(gsf_type_call call, const gsf_type_event_info* info, gsf_type_borrowed_bytes payload,
                  void* user_data) noexcept {
  Event event(call, info, payload);
  return Guard(call, [&] { return (*static_cast<F*>(user_data))(event); });
}

}  // namespace detail

/** What init gets: registration of handlers (which live as long as the process). */
class Registrar {
 public:
  explicit Registrar(gsf_type_call call) : call_(call) {}

  /** Handles event `name`: fn(Event&), returning void or a Status. */
  template <typename F>
  void on_event(std::string_view name, F&& fn) { Add(false, name, std::forward<F>(fn)); }
  /** Handles client messages of `type`: fn(Event&); the event's payload is the body. */
  template <typename F>
  void on_message(std::string_view type, F&& fn) { Add(true, type, std::forward<F>(fn)); }
  void log(int32_t level, std::string_view text) const { HostApi()->log(call_, level, Str(text)); }
  gsf_type_call call() const { return call_; }

 private:
  template <typename F>
  void Add(bool message, std::string_view name, F&& fn) {
    using Fn = std::decay_t<F>;
    auto* stored = new Fn(std::forward<F>(fn));  // kept for the life of the process
    Status s = message ? HostApi()->register_message(call_, Str(name), &detail::Trampoline<Fn>, stored)
                       : HostApi()->register_event(call_, Str(name), &detail::Trampoline<Fn>, stored);
    if (s != GSF_STATUS_OK) {
      delete stored;
      throw Error(s);
    }
  }
  gsf_type_call call_;
};

namespace detail {
inline Status RunInit(const gsf_type_host_api* api, gsf_type_call call, void (*init)(Registrar&)) noexcept {
  HostApi() = api;
  return Guard(call, [&] {
    Registrar r(call);
    init(r);
  });
}
}  // namespace detail

}  // namespace gsf::plugin

/** Defines the plugin: GSF_PLUGIN_CPP("name", "1.0.0", Init) with `void Init(gsf::plugin::Registrar&)`. */
#define GSF_PLUGIN_CPP(name, version, init)                                                        \
  static gsf_type_status gsf_plugin_cpp_init(const gsf_type_host_api* api, gsf_type_call call) { \
    return ::gsf::plugin::detail::RunInit(api, call, init);                                        \
  }                                                                                                \
  GSF_PLUGIN_DEFINE(name, version, gsf_plugin_cpp_init)
