// gsf_plugin_call.hpp: part of gsf_plugin.hpp (include that). What acts on behalf of a call:
// Call (any hook's call: an event's, a continuation's, init's, a lifecycle hook's) and Event
// (an event handler's: its info and payload too).
#pragma once

namespace gsf::plugin {

class Event;

namespace detail {
template <typename Fn>
Status ObjectThen(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields, void* user_data) noexcept;
#if GSF_TARGET_ABI_MINOR >= 2
template <typename Fn>
Status AccountThen(gsf_type_call call, const gsf_type_account_result* result, void* user_data) noexcept;
template <typename Fn>
Status TimerRun(gsf_type_call call, const gsf_type_event_info* info, void* user_data) noexcept;
template <typename Fn>
Status ResultThen(gsf_type_call call, const gsf_type_call_result* result, void* user_data) noexcept;
template <typename T>
struct IsPair : std::false_type {};
template <typename A, typename B>
struct IsPair<std::pair<A, B>> : std::true_type {};
template <typename T>
struct Transaction;

/** A host function of 1.2 that this gsf may not fill in yet (NULL): NOT_IMPLEMENTED instead of a crash. */
template <typename Fp>
Fp Need(Fp fn, const char* name) {
  if (!fn) throw Error(GSF_STATUS_NOT_IMPLEMENTED, std::string(name) + " is not implemented by this gsf");
  return fn;
}
#define GSF_CPP_HOST(field) ::gsf::plugin::detail::Need(::gsf::plugin::HostApi()->field, #field)
#endif
}  // namespace detail

/**
 * The services that act on behalf of one call. A Call is a value: copy it into nothing that
 * outlives its hook (gsf refuses a call that has ended with GSF_STATUS_EXPIRED).
 */
class Call {
 public:
  explicit Call(gsf_type_call call) : call_(call) {}
  gsf_type_call call() const { return call_; }

  /* ---- messages, events, timers, logs (1.0) ---- */

  /** Answers the message (its type unless `type` is given). */
  void reply(const Writer& body, std::string_view type = {}) const { reply(body.bytes(), type); }
  void reply(gsf_type_borrowed_bytes body, std::string_view type = {}) const { Check(HostApi()->reply(call_, Str(type), body)); }
  void send(uint64_t session, std::string_view type, const Writer& body) const {
    Check(HostApi()->send(call_, session, Str(type), body.bytes()));
  }
  void publish(std::string_view group, std::string_view type, const Writer& body) const { publish(group, type, body.bytes()); }
  void publish(std::string_view group, std::string_view type, gsf_type_borrowed_bytes body) const {
    Check(HostApi()->publish(call_, Str(group), Str(type), body));
  }
  uint64_t invoke(std::string_view event, const Writer* payload = nullptr, const Invoke& options = Invoke()) const {
    uint64_t id = 0;
    Check(HostApi()->invoke(call_, Str(event), payload ? payload->bytes() : gsf_bytes(nullptr, 0), &options.o, &id));
    return id;
  }
  /** Fires event `event` once after `ms` (timer tag); the id for timer_cancel, or Timer(id) to own it. */
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

#if GSF_TARGET_ABI_MINOR >= 1
  /* ---- objects of the running event (1.1) ---- */

  /**
   * Fetches object `id` of `type`: then(Call&, const Object*) runs in the same event once this
   * hook has returned (nullptr: there is none), and may return void or a Status.
   */
  template <typename F>
  void fetch(std::string_view type, std::string_view id, Mode mode, F&& then) const {
#if GSF_TARGET_ABI_MINOR >= 2
    detail::Hand(std::forward<F>(then), [&](void* ud, gsf_on_drop drop) {
      return HostApi()->object_fetch_v2(call_, Str(type), Str(id), static_cast<uint32_t>(mode),
                                        &detail::ObjectThen<std::decay_t<F>>, ud, drop);
    });
#else
    HandOnce(std::forward<F>(then), [&](void* ud, gsf_on_object fn) {
      return HostApi()->object_fetch(call_, Str(type), Str(id), static_cast<uint32_t>(mode), fn, ud);
    });
#endif
  }
  /** Fetches the object of `type` whose unique field `field` holds `key` (one msgpack value). */
  template <typename F>
  void fetch_by(std::string_view type, std::string_view field, gsf_type_borrowed_bytes key, Mode mode, F&& then) const {
#if GSF_TARGET_ABI_MINOR >= 2
    detail::Hand(std::forward<F>(then), [&](void* ud, gsf_on_drop drop) {
      return HostApi()->object_fetch_by_v2(call_, Str(type), Str(field), key, static_cast<uint32_t>(mode),
                                           &detail::ObjectThen<std::decay_t<F>>, ud, drop);
    });
#else
    HandOnce(std::forward<F>(then), [&](void* ud, gsf_on_object fn) {
      return HostApi()->object_fetch_by(call_, Str(type), Str(field), key, static_cast<uint32_t>(mode), fn, ud);
    });
#endif
  }
  /** fetch_by with a string key. */
  template <typename F>
  void fetch_by(std::string_view type, std::string_view field, std::string_view key, Mode mode, F&& then) const {
    Writer k;
    k.string(key);
    fetch_by(type, field, k.bytes(), mode, std::forward<F>(then));
  }
  /** Sets fields (a msgpack map) of an object this event fetched with Mode::write. */
  void set(std::string_view type, std::string_view id, const Writer& fields) const {
    Check(HostApi()->object_set(call_, Str(type), Str(id), fields.bytes()));
  }
#endif

#if GSF_TARGET_ABI_MINOR >= 2
  /* ---- sessions and accounts (1.2) ---- */

  void join(uint64_t session, std::string_view group) const { Check(HostApi()->session_join(call_, session, Str(group))); }
  void leave(uint64_t session, std::string_view group) const { Check(HostApi()->session_leave(call_, session, Str(group))); }
  /** Closes a session (code 4010) with `reason`, after the frames this call sent it. */
  void close(uint64_t session, std::string_view reason = {}) const { Check(HostApi()->session_close(call_, session, Str(reason))); }
  /** Sends one message to every session. */
  void broadcast(std::string_view type, const Writer& body) const { broadcast(type, body.bytes()); }
  void broadcast(std::string_view type, gsf_type_borrowed_bytes body) const {
    Check(HostApi()->broadcast(call_, nullptr, 0, Str(type), body));
  }
  /** Sends one message to the sessions listed. */
  void broadcast(const std::vector<uint64_t>& sessions, std::string_view type, const Writer& body) const {
    Check(HostApi()->broadcast(call_, sessions.data(), sessions.size(), Str(type), body.bytes()));
  }
  /** Logs `account` in on `session` (0: the event's); then(Call&, const AccountResult&) gets the outcome. */
  template <typename F>
  void login(std::string_view account, uint64_t session, F&& then) const {
    AccountCall(std::forward<F>(then), [&](gsf_on_account fn, void* ud, gsf_on_drop drop) {
      return HostApi()->account_login(call_, Str(account), session, fn, ud, drop);
    });
  }
  /** Logs `account` in, not waiting for the outcome. */
  void login(std::string_view account, uint64_t session = 0) const {
    Check(HostApi()->account_login(call_, Str(account), session, nullptr, nullptr, nullptr));
  }
  template <typename F>
  void logout(std::string_view account, F&& then) const {
    AccountCall(std::forward<F>(then), [&](gsf_on_account fn, void* ud, gsf_on_drop drop) {
      return HostApi()->account_logout(call_, Str(account), fn, ud, drop);
    });
  }
  void logout(std::string_view account) const { Check(HostApi()->account_logout(call_, Str(account), nullptr, nullptr, nullptr)); }
  /** Where `account` is logged in: then(Call&, const AccountResult&), session() 0 for nowhere. */
  template <typename F>
  void locate(std::string_view account, F&& then) const {
    AccountCall(std::forward<F>(then), [&](gsf_on_account fn, void* ud, gsf_on_drop drop) {
      return HostApi()->account_locate(call_, Str(account), fn, ud, drop);
    });
  }
  /** Whom `session` is logged in as: then(Call&, const AccountResult&), account() empty for nobody. */
  template <typename F>
  void account_of(uint64_t session, F&& then) const {
    AccountCall(std::forward<F>(then), [&](gsf_on_account fn, void* ud, gsf_on_drop drop) {
      return HostApi()->account_of_session(call_, session, fn, ud, drop);
    });
  }

  /* ---- timers with a function (1.2) ---- */

  /**
   * Runs fn(Event&) after `delay_ms`, then every `interval_ms` if > 0, as an event named `name`
   * (empty: "timer.<plugin>") on the timer tag. The Timer cancels it when dropped; detach() it
   * to let gsf end it (reload, shutdown). gsf frees `fn` exactly once.
   */
  template <typename F>
  [[nodiscard]] Timer start_timer(double delay_ms, double interval_ms, std::string_view name, F&& fn) const {
    uint64_t id = 0;
    detail::Hand(std::forward<F>(fn), [&](void* ud, gsf_on_drop drop) {
      return HostApi()->timer_start(call_, delay_ms, interval_ms, Str(name), &detail::TimerRun<std::decay_t<F>>, ud, drop, &id);
    });
    return Timer(id);
  }

  /* ---- objects: create, delete, the cache, transactions (1.2) ---- */

  /**
   * Creates an object of `type` with `fields` (a msgpack map; id empty: a random UUID),
   * committed with the event's changes: then(Call&, const Result&) gets its id and fields, or
   * the failure (r.check() throws it on).
   */
  template <typename F>
  void create(std::string_view type, const Writer& fields, std::string_view id, F&& then) const {
    detail::Hand(std::forward<F>(then), [&](void* ud, gsf_on_drop drop) {
      return GSF_CPP_HOST(object_create)(call_, Str(type), Str(id), fields.bytes(), &detail::ResultThen<std::decay_t<F>>, ud, drop);
    });
  }
  /** Creates an object, not waiting for the outcome (a refused field fails the event). */
  void create(std::string_view type, const Writer& fields, std::string_view id = {}) const {
    Check(GSF_CPP_HOST(object_create)(call_, Str(type), Str(id), fields.bytes(), nullptr, nullptr, nullptr));
  }
  /** Deletes an object this event fetched or created. */
  void remove(std::string_view type, std::string_view id) const { Check(GSF_CPP_HOST(object_delete)(call_, Str(type), Str(id))); }
  /**
   * Reads the last committed copy of an object from this thread's cache without waiting:
   * read(Reader&) gets its fields on OK; NOT_FOUND: there is none; UNAVAILABLE: not cached (fetch it).
   */
  template <typename F>
  Status read_cached(std::string_view type, std::string_view id, F&& read) const {
    gsf_type_host_bytes bytes{nullptr, 0};
    Status s = GSF_CPP_HOST(object_read_cached)(call_, Str(type), Str(id), &bytes);
    if (s != GSF_STATUS_OK) return s;
    std::unique_ptr<uint8_t, void (*)(uint8_t*)> release(bytes.ptr, [](uint8_t* p) { HostApi()->mem_free(p); });
    Reader r(gsf_bytes(bytes.ptr, bytes.len));
    read(r);
    return GSF_STATUS_OK;
  }
  /**
   * Runs fn(Event&) as a transaction of its own (an event; rerun on a conflict), from anywhere:
   * on_start, a timer, an event (it starts after it). done(Call&, const Result&) runs after its
   * commit or failure. Returns the transaction's event id.
   */
  template <typename F, typename D>
  uint64_t transact(F&& fn, D&& done, const Invoke& options = Invoke()) const {
    using T = detail::Transaction<std::pair<std::decay_t<F>, std::decay_t<D>>>;
    return Transact<T>(std::make_pair(std::forward<F>(fn), std::forward<D>(done)), options, &T::Done);
  }
  template <typename F>
  uint64_t transact(F&& fn) const {
    using T = detail::Transaction<std::decay_t<F>>;
    return Transact<T>(std::forward<F>(fn), Invoke(), nullptr);
  }

  /* ---- cluster and authenticator calls (1.2) ---- */

  /** Queues `event` on server `server` of the cluster: then(Call&, const Result&), number() its id there. */
  template <typename F>
  void cluster_invoke(std::string_view server, std::string_view event, const Writer* payload, F&& then,
                      const Invoke& options = Invoke()) const {
    detail::Hand(std::forward<F>(then), [&](void* ud, gsf_on_drop drop) {
      return GSF_CPP_HOST(cluster_invoke)(call_, Str(server), Str(event), payload ? payload->bytes() : gsf_bytes(nullptr, 0),
                                          &options.o, &detail::ResultThen<std::decay_t<F>>, ud, drop);
    });
  }
  /** Sends a message to the session `account` is logged in on, on any server: then's number() 1 sent, 0 not logged in. */
  template <typename F>
  void send_to_account(std::string_view account, std::string_view type, const Writer& body, F&& then) const {
    detail::Hand(std::forward<F>(then), [&](void* ud, gsf_on_drop drop) {
      return GSF_CPP_HOST(cluster_send_to_account)(call_, Str(account), Str(type), body.bytes(), &detail::ResultThen<std::decay_t<F>>, ud, drop);
    });
  }
  void send_to_account(std::string_view account, std::string_view type, const Writer& body) const {
    Check(GSF_CPP_HOST(cluster_send_to_account)(call_, Str(account), Str(type), body.bytes(), nullptr, nullptr, nullptr));
  }
  /** Authenticates `request` (the managed request as a map): then(Call&, const Result&), value() the response. */
  template <typename F>
  void authenticate(const Writer& request, F&& then) const {
    detail::Hand(std::forward<F>(then), [&](void* ud, gsf_on_drop drop) {
      return GSF_CPP_HOST(auth_authenticate)(call_, request.bytes(), &detail::ResultThen<std::decay_t<F>>, ud, drop);
    });
  }
  /** The friend list (personal info) of `request`, as authenticate. */
  template <typename F>
  void personal_info(const Writer& request, F&& then) const {
    detail::Hand(std::forward<F>(then), [&](void* ud, gsf_on_drop drop) {
      return GSF_CPP_HOST(auth_personal_info)(call_, request.bytes(), &detail::ResultThen<std::decay_t<F>>, ud, drop);
    });
  }
#endif

 protected:
  gsf_type_call call_;

 private:
#if GSF_TARGET_ABI_MINOR >= 2
  template <typename T, typename V>
  uint64_t Transact(V&& value, const Invoke& options, gsf_on_result done) const {
    uint64_t id = 0;
    detail::Hand(T{std::forward<V>(value)}, [&](void* ud, gsf_on_drop drop) {
      return GSF_CPP_HOST(object_transact)(call_, &options.o, &T::Run, done, ud, drop, &id);
    });
    return id;
  }
  template <typename F, typename Submit>
  static void AccountCall(F&& then, Submit&& submit) {
    detail::Hand(std::forward<F>(then), [&](void* ud, gsf_on_drop drop) {
      return submit(&detail::AccountThen<std::decay_t<F>>, ud, drop);
    });
  }
#elif GSF_TARGET_ABI_MINOR >= 1
  // 1.1 has no destructors: the continuation frees itself when it runs (a dropped one leaks).
  template <typename Fn>
  static Status OnceThen(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields, void* ud) noexcept {
    std::unique_ptr<Fn> fn(static_cast<Fn*>(ud));
    return detail::ObjectThen<Fn>(call, found, id, fields, fn.get());
  }
  template <typename F, typename Submit>
  static void HandOnce(F&& then, Submit&& submit) {
    using Fn = std::decay_t<F>;
    std::unique_ptr<Fn> held(new Fn(std::forward<F>(then)));
    Check(submit(static_cast<void*>(held.get()), &OnceThen<Fn>));
    held.release();
  }
#endif
};

/** The event a handler runs for, and the services that act on its behalf. */
class Event : public Call {
 public:
  Event(gsf_type_call call, const gsf_type_event_info* info, gsf_type_borrowed_bytes payload)
      : Call(call), info_(info), payload_(payload) {}

  EventInfo info() const { return info_; }
  uint64_t id() const { return info_.id(); }
  uint64_t tag() const { return info_.tag(); }
  uint64_t session() const { return info_.session(); }
  uint32_t kind() const { return info_.kind(); }
  std::string_view name() const { return info_.name(); }
  /** The payload, or a message handler's body. */
  Reader payload() const { return Reader(payload_); }
  gsf_type_borrowed_bytes raw_payload() const { return payload_; }

 private:
  EventInfo info_;
  gsf_type_borrowed_bytes payload_;
};

namespace detail {

template <typename Fn>
Status ObjectThen(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields, void* user_data) noexcept {
  return Guard(call, [&] {
    Call c(call);
    Object object{View(id), fields};
    return (*static_cast<Fn*>(user_data))(c, found ? &object : static_cast<const Object*>(nullptr));
  });
}

#if GSF_TARGET_ABI_MINOR >= 2
template <typename Fn>
Status AccountThen(gsf_type_call call, const gsf_type_account_result* result, void* user_data) noexcept {
  return Guard(call, [&] {
    Call c(call);
    AccountResult r(result);
    return (*static_cast<Fn*>(user_data))(c, r);
  });
}

template <typename Fn>
Status TimerRun(gsf_type_call call, const gsf_type_event_info* info, void* user_data) noexcept {
  return Guard(call, [&] {
    Event ev(call, info, gsf_bytes(nullptr, 0));
    return (*static_cast<Fn*>(user_data))(ev);
  });
}

template <typename Fn>
Status ResultThen(gsf_type_call call, const gsf_type_call_result* result, void* user_data) noexcept {
  return Guard(call, [&] {
    Call c(call);
    Result r(result);
    return (*static_cast<Fn*>(user_data))(c, r);
  });
}

/** A transaction's body (and its done, when T is a pair), held as one piece of user data. */
template <typename T>
struct Transaction {
  T fn;
  static auto& Body(T& t) {
    if constexpr (IsPair<T>::value) return t.first; else return t;
  }
  static Status Run(gsf_type_call call, const gsf_type_event_info* info, void* ud) noexcept {
    return Guard(call, [&] {
      Event ev(call, info, gsf_bytes(nullptr, 0));
      return Body(static_cast<Transaction*>(ud)->fn)(ev);
    });
  }
  static Status Done(gsf_type_call call, const gsf_type_call_result* result, void* ud) noexcept {
    if constexpr (IsPair<T>::value) {
      return Guard(call, [&] {
        Call c(call);
        Result r(result);
        return static_cast<Transaction*>(ud)->fn.second(c, r);
      });
    } else {
      return GSF_STATUS_OK;
    }
  }
};
#endif

}  // namespace detail
}  // namespace gsf::plugin
