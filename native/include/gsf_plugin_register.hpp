// gsf_plugin_register.hpp: part of gsf_plugin.hpp (include that). What init registers (events,
// messages, REST routes, the operations console, session and timeout hooks), the API requests
// those handlers get, their response writers, and the macros that define a plugin.
#pragma once

namespace gsf::plugin {

#if GSF_TARGET_ABI_MINOR >= 1
/** One API request (a route's, a console operation's); borrowed, valid during the hook only. */
class Request {
 public:
  explicit Request(const gsf_type_api_request* r) : r_(r) {}
  /** "GetUser", "BeginCampaign", "CustomQuery", or "route". */
  std::string_view operation() const { return View(r_->operation); }
  std::string_view method() const { return View(r_->method); }
  std::string_view path() const { return View(r_->path); }
  /** GSF_ANSWER_*: what the response writer takes. */
  uint32_t answer_kind() const { return r_->answer_kind; }
  /** The arguments (a msgpack map; see gsf_type_api_request). */
  Reader args() const { return Reader(r_->args); }
  gsf_type_borrowed_bytes raw_args() const { return r_->args; }
  std::optional<Reader> arg(const char* key) const { return args().find(key); }

 private:
  const gsf_type_api_request* r_;
};

/**
 * A response writer: answers one API request exactly once, now or later, from any thread (a
 * token; copy it into a continuation). Each answer returns gsf's status: CONFLICT for a second
 * answer, EXPIRED after the request's deadline.
 */
class Response {
 public:
  explicit Response(gsf_type_api_writer w) : w_(w) {}
  gsf_type_api_writer writer() const { return w_; }
  /** The status only (204). */
  Status ok() const { return HostApi()->answer_void(w_); }
  Status ok(bool value) const { return HostApi()->answer_bool(w_, value ? 1 : 0); }
  /** A JSON object or array, given as msgpack. */
  Status json(const Writer& value) const { return HostApi()->answer_json(w_, value.bytes()); }
  Status json(gsf_type_borrowed_bytes value) const { return HostApi()->answer_json(w_, value); }
  Status string(std::string_view value) const { return HostApi()->answer_string(w_, Str(value)); }
  template <typename Container>
  Status strings(const Container& items) const {
    auto v = Strs(items);
    return HostApi()->answer_string_array(w_, v.data(), v.size());
  }
  Status strings(std::initializer_list<std::string_view> items) const {
    auto v = Strs(items);
    return HostApi()->answer_string_array(w_, v.data(), v.size());
  }
  /** Fails the request with `status` (not OK) and a message for the caller. */
  Status fail(Status status, std::string_view message) const { return HostApi()->answer_error(w_, status, Str(message)); }

 private:
  gsf_type_api_writer w_;
};

namespace detail {
template <typename Fn>
Status Api(Fn& fn, gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer) noexcept {
  return Guard(call, [&] {
    Call c(call);
    Request req(request);
    return fn(c, req, Response(writer));
  });
}
/** An API hook whose lambda is user_data. */
template <typename Fn>
Status ApiHook(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) noexcept {
  return Api(*static_cast<Fn*>(user_data), call, request, writer);
}
/** The lambda of console operation M: one per plugin copy (the table has one user_data for all). */
template <gsf_on_api gsf_type_console_handlers::*M, typename Fn>
Fn*& ConsoleSlot() {
  static Fn* fn = nullptr;
  return fn;
}
template <gsf_on_api gsf_type_console_handlers::*M, typename Fn>
Status ConsoleHook(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void*) noexcept {
  return Api(*ConsoleSlot<M, Fn>(), call, request, writer);
}
/** A campaign type's begin and end, held together (one user_data). */
template <typename B, typename E>
struct Campaign {
  B begin;
  E end;
  static Status Begin(gsf_type_call c, const gsf_type_api_request* r, gsf_type_api_writer w, void* ud) noexcept {
    return Api(static_cast<Campaign*>(ud)->begin, c, r, w);
  }
  static Status End(gsf_type_call c, const gsf_type_api_request* r, gsf_type_api_writer w, void* ud) noexcept {
    return Api(static_cast<Campaign*>(ud)->end, c, r, w);
  }
};
}  // namespace detail

/**
 * The console handler table: one fn(Call&, const Request&, Response) per operation (SPEC 4.6),
 * each answering with the kind gsf_type_console_handlers lists; unset operations stay
 * unexposed. Register it with Registrar::console.
 */
class Console {
 public:
  Console() : t_(gsf_console_handlers()) {}
  template <gsf_on_api gsf_type_console_handlers::*M, typename F>
  Console& on(F&& fn) {
    using Fn = std::decay_t<F>;
    detail::ConsoleSlot<M, Fn>() = new Fn(std::forward<F>(fn));  // kept for the life of the process
    t_.*M = &detail::ConsoleHook<M, Fn>;
    return *this;
  }
#define GSF_CONSOLE_OPERATION(op) \
  template <typename F>           \
  Console& op(F&& fn) { return on<&gsf_type_console_handlers::op>(std::forward<F>(fn)); }
  GSF_CONSOLE_OPERATION(get_user_search_conditions)
  GSF_CONSOLE_OPERATION(search_users)
  GSF_CONSOLE_OPERATION(get_user)
  GSF_CONSOLE_OPERATION(update_user)
  GSF_CONSOLE_OPERATION(is_logged_in)
  GSF_CONSOLE_OPERATION(force_logout)
  GSF_CONSOLE_OPERATION(get_user_banned)
  GSF_CONSOLE_OPERATION(ban_user)
  GSF_CONSOLE_OPERATION(unban_user)
  GSF_CONSOLE_OPERATION(get_characters)
  GSF_CONSOLE_OPERATION(get_character)
  GSF_CONSOLE_OPERATION(update_character)
  GSF_CONSOLE_OPERATION(get_character_inventory_info)
  GSF_CONSOLE_OPERATION(get_inventory)
  GSF_CONSOLE_OPERATION(delete_inventory_item)
  GSF_CONSOLE_OPERATION(delete_multiple_inventory_items)
  GSF_CONSOLE_OPERATION(give_gift)
  GSF_CONSOLE_OPERATION(give_gift_to_all)
  GSF_CONSOLE_OPERATION(refund)
  GSF_CONSOLE_OPERATION(send_realtime_notice)
  GSF_CONSOLE_OPERATION(get_character_periodic_mission_status)
  GSF_CONSOLE_OPERATION(get_character_mission_status)
#undef GSF_CONSOLE_OPERATION
  const gsf_type_console_handlers& table() const { return t_; }

 private:
  gsf_type_console_handlers t_;
};
#endif

namespace detail {
template <typename F>
Status Trampoline(gsf_type_call call, const gsf_type_event_info* info, gsf_type_borrowed_bytes payload,
                  void* user_data) noexcept {
  Event event(call, info, payload);
  return Guard(call, [&] { return (*static_cast<F*>(user_data))(event); });
}
#if GSF_TARGET_ABI_MINOR >= 2
template <typename Fn>
Status SessionHook(gsf_type_call call, const gsf_type_event_info* info, const gsf_type_session_info* session, void* user_data) noexcept {
  Event event(call, info, gsf_bytes(nullptr, 0));
  SessionInfo s(session);
  return Guard(call, [&] { return (*static_cast<Fn*>(user_data))(event, s); });
}
template <typename Fn>
Status CounterHook(gsf_type_borrowed_str category, gsf_type_borrowed_str name, double* value, void* user_data) noexcept {
  try {
    std::optional<double> v = (*static_cast<Fn*>(user_data))(View(category), View(name));
    if (!v) return GSF_STATUS_NOT_FOUND;
    *value = *v;
    return GSF_STATUS_OK;
  } catch (...) {
    return GSF_STATUS_NOT_FOUND;  // no call to carry a message: the read answers "no value"
  }
}
template <typename Fn>
void TimeoutHook(gsf_type_call call, const gsf_type_event_info* info, void* user_data) noexcept {
  Guard(call, [&] {
    Call c(call);
    (*static_cast<Fn*>(user_data))(c, EventInfo(info));
  });
}
#endif
}  // namespace detail

/** What init gets: registration (init only) and the services of init's call. */
class Registrar : public Call {
 public:
  explicit Registrar(gsf_type_call call) : Call(call) {}

  /** Handles event `name`: fn(Event&), returning void or a Status. Kept for the life of the process. */
  template <typename F>
  void on_event(std::string_view name, F&& fn) { Add(false, name, std::forward<F>(fn)); }
  /** Handles client messages of `type`: fn(Event&); the event's payload is the body. */
  template <typename F>
  void on_message(std::string_view type, F&& fn) { Add(true, type, std::forward<F>(fn)); }

#if GSF_TARGET_ABI_MINOR >= 1
  /** Serves `method` `path` on the API service: fn(Call&, const Request&, Response); `{name}` segments are parameters. */
  template <typename F>
  void route(std::string_view method, std::string_view path, F&& fn, std::string_view event_name = {}) {
    Keep(std::forward<F>(fn), [&](auto hook, void* ud) { return HostApi()->register_route(call_, Str(method), Str(path), Str(event_name), hook, ud); });
  }
  /** Registers the console handler table (one plugin per operation). */
  void console(const Console& handlers) { Check(HostApi()->console_register_handlers(call_, &handlers.table())); }
  /** SetEditableFieldsForUser (GSF_CONSOLE_ACCOUNT) / ForCharacter (GSF_CONSOLE_CHARACTER). */
  void editable_fields(uint32_t target, std::initializer_list<std::string_view> fields) {
    auto v = Strs(fields);
    Check(HostApi()->console_set_editable_fields(call_, target, v.data(), v.size()));
  }
  /** SetGiftableItems: {item id, name} pairs. */
  void giftable_items(std::initializer_list<std::pair<std::string_view, std::string_view>> items) {
    std::vector<gsf_type_borrowed_str> ids, names;
    for (const auto& [id, name] : items) ids.push_back(Str(id)), names.push_back(Str(name));
    Check(HostApi()->console_set_giftable_items(call_, ids.data(), names.data(), ids.size()));
  }
  void notice_categories(std::initializer_list<std::string_view> categories) {
    auto v = Strs(categories);
    Check(HostApi()->console_set_notice_categories(call_, v.data(), v.size()));
  }
  void mission_categories(std::initializer_list<std::string_view> normal, std::initializer_list<std::string_view> achievement) {
    auto n = Strs(normal), a = Strs(achievement);
    Check(HostApi()->console_set_mission_categories(call_, n.data(), n.size(), a.data(), a.size()));
  }
  /** RegisterCampaignType: begin and end are fn(Call&, const Request&, Response) answering void. */
  template <typename B, typename E>
  void campaign(std::string_view type, B&& begin, E&& end) {
    using C = detail::Campaign<std::decay_t<B>, std::decay_t<E>>;
    std::unique_ptr<C> held(new C{std::forward<B>(begin), std::forward<E>(end)});
    Check(HostApi()->console_register_campaign_type(call_, Str(type), &C::Begin, &C::End, held.get()));
    held.release();  // kept for the life of the process
  }
  /**
   * RegisterCustomQueryHandler at `method` /cs-api/v1/custom-queries/<uri>/: fn answers a JSON
   * object or array. `response_fields` std::nullopt: not set.
   */
  template <typename F>
  void custom_query(std::string_view name, std::string_view method, std::string_view uri, std::initializer_list<std::string_view> request_fields,
                    std::optional<std::initializer_list<std::string_view>> response_fields, F&& fn) {
    auto in = Strs(request_fields);
    auto out = response_fields ? Strs(*response_fields) : std::vector<gsf_type_borrowed_str>();
    Keep(std::forward<F>(fn), [&](auto hook, void* ud) {
      return HostApi()->console_register_custom_query(call_, Str(name), Str(method), Str(uri), in.data(), in.size(),
                                                      response_fields ? out.data() : nullptr, out.size(), hook, ud);
    });
  }
#endif

#if GSF_TARGET_ABI_MINOR >= 2
  /** Runs fn(Event&, const SessionInfo&) when a session opens; gsf frees fn when the copy is retired. */
  template <typename F>
  void on_session_opened(F&& fn) { Session(false, std::forward<F>(fn)); }
  /** Runs fn(Event&, const SessionInfo&) when a session has closed (info.account(): who it was). */
  template <typename F>
  void on_session_closed(F&& fn) { Session(true, std::forward<F>(fn)); }
  /**
   * Defines user flag `name` (GSF_FLAG_*) with its default (one msgpack value of that type), as
   * flags.define; read it with host::flag.
   */
  void flag(std::string_view name, uint32_t type, const Writer& default_value, std::string_view description) {
    Check(GSF_CPP_HOST(flag_define)(call_, Str(name), type, default_value.bytes(), Str(description)));
  }
  /**
   * A counter computed when read: fn(std::string_view category, std::string_view name) returns
   * std::optional<double> (std::nullopt: no value now). It runs on gsf's main thread and must
   * not block; what it throws is logged nowhere and reads as no value.
   */
  template <typename F>
  void callable_counter(std::string_view category, std::string_view name, std::string_view description, F&& fn) {
    detail::Hand(std::forward<F>(fn), [&](void* ud, gsf_on_drop drop) {
      return GSF_CPP_HOST(counter_register_callable)(call_, Str(category), Str(name), Str(description),
                                                     &detail::CounterHook<std::decay_t<F>>, ud, drop);
    });
  }
  /** Warns (every counter_monitoring_interval_in_sec) while counter category/name is above `threshold`. */
  void monitor(std::string_view category, std::string_view name, double threshold) {
    Check(GSF_CPP_HOST(counter_monitor)(call_, Str(category), Str(name), threshold));
  }
  /** Runs fn(Call&, EventInfo) on the main thread when any event times out. */
  template <typename F>
  void on_timeout(F&& fn) {
    detail::Hand(std::forward<F>(fn), [&](void* ud, gsf_on_drop drop) {
      return HostApi()->register_timeout_handler(call_, &detail::TimeoutHook<std::decay_t<F>>, ud, drop);
    });
  }
#endif

 private:
  template <typename F>
  void Add(bool message, std::string_view name, F&& fn) {
    using Fn = std::decay_t<F>;
    std::unique_ptr<Fn> stored(new Fn(std::forward<F>(fn)));  // kept for the life of the process
    Check(message ? HostApi()->register_message(call_, Str(name), &detail::Trampoline<Fn>, stored.get())
                  : HostApi()->register_event(call_, Str(name), &detail::Trampoline<Fn>, stored.get()));
    stored.release();
  }
#if GSF_TARGET_ABI_MINOR >= 1
  template <typename F, typename Submit>
  void Keep(F&& fn, Submit&& submit) {
    using Fn = std::decay_t<F>;
    std::unique_ptr<Fn> stored(new Fn(std::forward<F>(fn)));  // kept for the life of the process
    Check(submit(&detail::ApiHook<Fn>, static_cast<void*>(stored.get())));
    stored.release();
  }
#endif
#if GSF_TARGET_ABI_MINOR >= 2
  template <typename F>
  void Session(bool closed, F&& fn) {
    detail::Hand(std::forward<F>(fn), [&](void* ud, gsf_on_drop drop) {
      auto hook = &detail::SessionHook<std::decay_t<F>>;
      return closed ? HostApi()->register_session_closed(call_, hook, ud, drop) : HostApi()->register_session_opened(call_, hook, ud, drop);
    });
  }
#endif
};

namespace detail {
inline Status RunInit(const gsf_type_host_api* api, gsf_type_call call, void (*init)(Registrar&)) noexcept {
  HostApi() = api;
  return Guard(call, [&] {
    Registrar r(call);
    init(r);
  });
}
/** A lifecycle hook: fn(Call&) (nullptr: nothing to do). */
inline Status RunHook(const gsf_type_host_api* api, gsf_type_call call, void (*fn)(Call&)) noexcept {
  HostApi() = api;
  return Guard(call, [&] {
    Call c(call);
    if (fn) fn(c);
  });
}
inline Status RunStop(const gsf_type_host_api* api, gsf_type_call call, int64_t deadline_ms, void (*fn)(Call&, int64_t)) noexcept {
  HostApi() = api;
  return Guard(call, [&] {
    Call c(call);
    if (fn) fn(c, deadline_ms);
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

#if GSF_TARGET_ABI_MINOR >= 2
/**
 * GSF_PLUGIN_CPP with lifecycle hooks (each may be nullptr): `void Start(gsf::plugin::Call&)`
 * once the server serves, `void Stop(gsf::plugin::Call&, int64_t deadline_ms)` when it stops or
 * a reload replaces this copy, `void Unload(gsf::plugin::Call&)` before the copy is retired.
 */
#define GSF_PLUGIN_CPP_LIFECYCLE(name, version, init, start, stop, unload)                                             \
  static gsf_type_status gsf_plugin_cpp_init(const gsf_type_host_api* api, gsf_type_call call) {                     \
    return ::gsf::plugin::detail::RunInit(api, call, init);                                                            \
  }                                                                                                                    \
  static gsf_type_status gsf_plugin_cpp_start(const gsf_type_host_api* api, gsf_type_call call) {                    \
    return ::gsf::plugin::detail::RunHook(api, call, start);                                                           \
  }                                                                                                                    \
  static gsf_type_status gsf_plugin_cpp_stop(const gsf_type_host_api* api, gsf_type_call call, int64_t deadline) {   \
    return ::gsf::plugin::detail::RunStop(api, call, deadline, stop);                                                  \
  }                                                                                                                    \
  static void gsf_plugin_cpp_unload(const gsf_type_host_api* api, gsf_type_call call) {                              \
    ::gsf::plugin::detail::RunHook(api, call, unload);                                                                 \
  }                                                                                                                    \
  GSF_PLUGIN_DEFINE_LIFECYCLE(name, version, gsf_plugin_cpp_init, gsf_plugin_cpp_start, gsf_plugin_cpp_stop,          \
                              gsf_plugin_cpp_unload)
#endif
