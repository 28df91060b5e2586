// gsf_plugin_types.hpp: part of gsf_plugin.hpp (include that). Views of what gsf passes hooks
// and continuations: an event's info, an object, a session, the answers to asynchronous calls.
// All are borrowed: valid during the hook or continuation only (copy what you keep).
#pragma once

namespace gsf::plugin {

/** The event a hook runs for (borrowed: valid during the hook only). */
class EventInfo {
 public:
  explicit EventInfo(const gsf_type_event_info* info) : info_(info) {}
  uint64_t id() const { return info_->event_id; }
  uint64_t tag() const { return info_->tag; }
  uint64_t session() const { return info_->session_id; }
  uint32_t kind() const { return info_->kind; }
  std::string_view name() const { return View(info_->name); }

 private:
  const gsf_type_event_info* info_;
};

/** An object a fetch found: its id and its fields (a msgpack map); borrowed, valid in the continuation only. */
struct Object {
  std::string_view id;
  gsf_type_borrowed_bytes raw;
  /** A reader at the fields map. */
  Reader fields() const { return Reader(raw); }
  /** One field's value (std::nullopt: absent). */
  std::optional<Reader> field(const char* key) const { return fields().find(key); }
};

#if GSF_TARGET_ABI_MINOR >= 2
/** The answer to an account call (borrowed, valid in the continuation only). */
class AccountResult {
 public:
  explicit AccountResult(const gsf_type_account_result* r) : r_(r) {}
  /** GSF_ACCOUNT_*: the call this answers. */
  uint32_t op() const { return r_->op; }
  /** login: logged in; logout: was logged in; locate: logged in here; of_session: the session is logged in. */
  bool found() const { return r_->found != 0; }
  /** login: GSF_LOGIN_*. */
  uint32_t login() const { return r_->login; }
  /** login: the session replaced or holding the account; locate: the account's session (0: none). */
  uint64_t session() const { return r_->session_id; }
  /** The account asked about, or of_session's answer (empty: none). */
  std::string_view account() const { return View(r_->account); }

 private:
  const gsf_type_account_result* r_;
};

/** A session as its opened and closed hooks see it (borrowed, valid during the hook only). */
class SessionInfo {
 public:
  explicit SessionInfo(const gsf_type_session_info* s) : s_(s) {}
  uint64_t id() const { return s_->session_id; }
  uint32_t close_code() const { return s_->close_code; }
  std::string_view version() const { return View(s_->version); }
  std::string_view codec() const { return View(s_->codec); }
  std::string_view address() const { return View(s_->address); }
  std::string_view reason() const { return View(s_->reason); }
  /** closed: the account it was logged in as (empty: none). */
  std::string_view account() const { return View(s_->account); }

 private:
  const gsf_type_session_info* s_;
};
#endif

#if GSF_TARGET_ABI_MINOR >= 2
/**
 * The answer to an asynchronous 1.2 call (object_create, a transaction's done, cluster and
 * authenticator calls). On a failure status() is not OK and error_code() / message() are what
 * a managed call rejects with.
 */
class Result {
 public:
  explicit Result(const gsf_type_call_result* r) : r_(r) {}
  /** GSF_CALL_*: the call this answers. */
  uint32_t op() const { return r_->op; }
  bool ok() const { return r_->status == GSF_STATUS_OK; }
  Status status() const { return r_->status; }
  /** The managed error code ("GSF_ERR_...") of a failure. */
  std::string_view error_code() const { return View(r_->error_code); }
  std::string_view message() const { return View(r_->message); }
  /** object_create: the new object's id; cluster_invoke: the server asked. */
  std::string_view id() const { return View(r_->id); }
  /** object_create: the object's fields ({id, ...fields}); auth calls: the authenticator's response map. */
  Reader value() const { return Reader(r_->value); }
  gsf_type_borrowed_bytes raw_value() const { return r_->value; }
  /** cluster_invoke: the event's id there; cluster_send_to_account: 1 sent, 0 not logged in. */
  uint64_t number() const { return r_->number; }
  /** Throws Error with the failure (its code and message) unless ok(). */
  const Result& check() const {
    if (!ok()) throw Error(status(), std::string(error_code()) + ": " + std::string(message()));
    return *this;
  }

 private:
  const gsf_type_call_result* r_;
};
#endif

}  // namespace gsf::plugin
