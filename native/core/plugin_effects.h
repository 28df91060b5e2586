// Where the effects of native handlers go: the main thread owns the sockets and the log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gsf {

/** An event a call's event invoked, with the id it was given (held with the event's effects). */
struct HeldPush {
  uint64_t id, tag, session_id;
  uint32_t name_id, handler_id;
  std::string_view payload;  // msgpack; empty: none
};

/** A timer a call's event started (timer_after, timer_every, timer_start), with its reserved id. */
struct HeldTimerStart {
  uint64_t id;
  double delay_ms, interval_ms;
  uint32_t name_id, handler_id;
  std::string_view payload;
};

/** Queues a held invoke now. */
void ApplyHeldPush(const HeldPush& push);
/** Starts a held timer now (nothing when it was cancelled meanwhile). */
void ApplyHeldTimer(const HeldTimerStart& timer);
/** Lets a held timer's reserved id go: it never starts, and a timer_start timer's user data is released. */
void DropHeldTimer(uint64_t id);

/**
 * The sink of one native call's outward effects. Frames arrive encoded: a session's frame in
 * its codec, a group's in both. Implementations: a list handed back to JavaScript with the
 * call's result (the binding), or a ring the main thread drains.
 */
struct PluginEffects {
  virtual ~PluginEffects() = default;
  /** A frame for one session: JSON text (binary false) or msgpack bytes (binary true). */
  virtual void Send(uint64_t session_id, std::string_view frame, bool binary) = 0;
  /** One message for every session of a group, as JSON text and as msgpack. */
  virtual void Publish(std::string_view group, std::string_view json_frame, std::string_view msgpack_frame) = 0;
  /** A log line; level 0 INFO, 1 WARNING, 2 ERROR, -n verbose level n. */
  virtual void Log(int level, std::string_view line) = 0;
  /**
   * The answer to API request `rid`, made by the call handling it: a status (GSF_STATUS_*), the
   * JSON body of an OK answer (`has_body` false: none, 204) or the message of a failure.
   */
  virtual void ApiAnswer(uint64_t rid, int32_t status, std::string_view body, bool has_body, std::string_view message) {
    (void)rid, (void)status, (void)body, (void)has_body, (void)message;
  }
  /**
   * An object request of the call's event (plugin_objects.cc): `op` fetch, fetch by key or set;
   * `name` the id (fetch, set) or the unique field (fetch by key); `bytes` the key (fetch by
   * key) or the fields (set), msgpack; `continuation` what runs with the object (fetches).
   */
  virtual void ObjectRequest(int op, uint64_t continuation, std::string_view type, std::string_view name, std::string_view bytes,
                             uint32_t mode) {
    (void)op, (void)continuation, (void)type, (void)name, (void)bytes, (void)mode;
  }
  /** A session joins (`join` true) or leaves a group (ABI 1.2, plugin_sessions.cc). */
  virtual void SessionGroup(uint64_t session_id, std::string_view group, bool join) { (void)session_id, (void)group, (void)join; }
  /** Closes a session with close code 4010 and `reason`. */
  virtual void SessionClose(uint64_t session_id, std::string_view reason) { (void)session_id, (void)reason; }
  /** One message for `count` sessions (`ids` null: every session), as JSON text and as msgpack. */
  virtual void Broadcast(const uint64_t* ids, size_t count, std::string_view json_frame, std::string_view msgpack_frame) {
    (void)ids, (void)count, (void)json_frame, (void)msgpack_frame;
  }
  /**
   * An account call of the call's event: `op` GSF_ACCOUNT_*, the account (login, logout, locate)
   * or the session (login, of_session); `continuation` what runs with the answer (0: none wanted).
   */
  virtual void AccountRequest(uint32_t op, uint64_t continuation, std::string_view account, uint64_t session_id) {
    (void)op, (void)continuation, (void)account, (void)session_id;
  }
  /**
   * A request of the call's event carried out through the managed API (ABI 1.2, plugin_results.h):
   * `op` a ServiceOp, `args` its arguments as a msgpack array; `continuation` what runs with the
   * answer (0: none wanted).
   */
  virtual void ServiceRequest(uint32_t op, uint64_t continuation, std::string_view args) {
    (void)op, (void)continuation, (void)args;
  }
  /**
   * An event the call's event invoked: queued when the event's effects are made (after its
   * object changes are durable), dropped with them (a rerun, a failure, a timeout), as a managed
   * handler's invoke. This default queues it at once.
   */
  virtual void Invoke(const HeldPush& push) { ApplyHeldPush(push); }
  /** A timer the call's event started: held as Invoke. This default starts it at once. */
  virtual void Timer(const HeldTimerStart& timer) { ApplyHeldTimer(timer); }
};

/** The `op` of PluginEffects::ObjectRequest. */
enum ObjectOp { kObjectOpFetch = 0, kObjectOpFetchBy = 1, kObjectOpSet = 2 };

/**
 * Where StderrEffects writes: the server log's descriptor (standard output, or its log_file), its
 * format, and the manifest's minloglevel and alsologtostderr (until the live settings are
 * published), set by the main thread at start (standard error, text, 0 and false until then).
 */
void SetLogTarget(int fd, bool json, int minloglevel, bool also_stderr);

/**
 * Writes log lines at once, to the server's log (lines of plugin threads, or of calls that
 * ended): at or above minloglevel, escaped as the JavaScript logger escapes them so that no
 * plugin text can forge a line, in its format.
 */
struct StderrEffects : PluginEffects {
  void Send(uint64_t, std::string_view, bool) override {}
  void Publish(std::string_view, std::string_view, std::string_view) override {}
  void Log(int level, std::string_view line) override;
};

}  // namespace gsf
