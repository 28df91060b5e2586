/*
 * gsf_plugin.h: the C ABI between gsf and its native plugins.
 *
 * A native plugin is a shared library that exports one data symbol, the plugin descriptor
 * `gsf_plugin_entry_v1` (write it with GSF_PLUGIN_DEFINE). gsf reads and checks the descriptor
 * before it calls any function of the plugin, then calls its init hook once per process with
 * the host-services table; init registers event and message handlers by name.
 *
 * Three kinds of names, so that a reader sees who implements what:
 *   gsf_type_*   types shared by both sides (structs start with struct_size and grow at the end);
 *   gsf_on_*     hooks the plugin implements and gsf calls (function pointer types);
 *   host->...    callbacks gsf implements and the plugin calls: the fields of gsf_type_host_api.
 *
 * Versioning. GSF_PLUGIN_ABI_MAJOR changes only when something already published changes; the
 * entry symbol's name carries it, so a plugin of another major is refused by name. A minor adds
 * fields at the end of a struct and nothing else (SQLite's rule for sqlite3_api_routines:
 * new interfaces go at the end, never in the middle). gsf loads a plugin when its major equals
 * gsf's and its minor is not newer than gsf's. Every field says since which version it exists.
 *
 * Targeting an older minor (as Node-API's NAPI_VERSION): define GSF_TARGET_ABI_MINOR before
 * including this header (or with -DGSF_TARGET_ABI_MINOR=0). GSF_PLUGIN_DEFINE then stamps that
 * minor, and the descriptor's size of that minor, so the plugin loads on every gsf of that minor
 * or later; the host-table fields of newer minors are hidden, so using one fails to compile.
 * Without it the plugin targets this header's minor.
 *
 * Ownership is in the type names:
 *   gsf_type_borrowed_*  a pointer and a length, valid during the call it is passed to only.
 *                        Both directions: gsf copies what it keeps of the plugin's borrowed
 *                        data, and a plugin copies what it keeps of gsf's.
 *   gsf_type_host_bytes  memory gsf allocated for the plugin to keep; the plugin releases it
 *                        with host->mem_free. Whatever a plugin hands gsf to keep is allocated
 *                        with host->mem_alloc as well (no such service exists in 1.0).
 *
 * Threading. Handlers run on gsf's event threads, several at once for different tags (events
 * of one tag never overlap). Every host callback is thread-safe. The effects of a handler
 * (reply, send, publish, invoke, timers, log lines tied to the event) are accepted only from
 * the thread running it and only until it returns or times out: after that they fail with
 * GSF_STATUS_EXPIRED.
 *
 * Payloads, message bodies and flag values are msgpack (gsf_msgpack.h reads and writes it).
 * Strings are UTF-8 and not NUL-terminated unless a field says so.
 *
 * Compiles as C99 and C++ (checked with -Wall -Wextra -Werror -pedantic).
 *
 * ABI 1.1 appends REST routes on the API service, the operations console (handler table,
 * registration rules, response writers) and object access from events (fetch, fetch by key, set).
 */
#ifndef GSF_PLUGIN_H
#define GSF_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions ------------------------------------------------------------------------------ */

#define GSF_PLUGIN_ABI_MAJOR 1
#define GSF_PLUGIN_ABI_MINOR 2

/**
 * The minor a plugin is built for: the oldest gsf it loads on is 1.GSF_TARGET_ABI_MINOR. It
 * defaults to this header's minor; set it lower to run on older gsf (fields of newer minors are
 * then hidden). @since 1.2
 */
#ifndef GSF_TARGET_ABI_MINOR
#define GSF_TARGET_ABI_MINOR GSF_PLUGIN_ABI_MINOR
#endif
#if GSF_TARGET_ABI_MINOR < 0 || GSF_TARGET_ABI_MINOR > GSF_PLUGIN_ABI_MINOR
#error "GSF_TARGET_ABI_MINOR must lie between 0 and GSF_PLUGIN_ABI_MINOR (this header's minor)"
#endif

/** The exported descriptor's name: "gsf_plugin_entry_v" followed by the major version. */
#define GSF_PLUGIN_ENTRY_SYMBOL "gsf_plugin_entry_v1"

#if defined(_WIN32)
#define GSF_PLUGIN_EXPORT __declspec(dllexport)
#else
#define GSF_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ---- types --------------------------------------------------------------------------------- */

/**
 * Outcome of a hook or a callback. The same codes are what operations-console handlers answer
 * with, so they name outcomes, not transports; gsf maps them to HTTP statuses and log lines.
 * @since 1.0
 */
typedef int32_t gsf_type_status;
enum {
  GSF_STATUS_OK = 0,
  GSF_STATUS_INVALID_ARGUMENT = 1,   /* the input is wrong; retrying the same input fails again */
  GSF_STATUS_NOT_FOUND = 2,          /* no such event, counter, flag, session, account, ... */
  GSF_STATUS_CONFLICT = 3,           /* already exists or registered; a concurrent change won */
  GSF_STATUS_UNAVAILABLE = 4,        /* not possible now (no running event, shutting down) */
  GSF_STATUS_INTERNAL = 5,           /* a bug or an unexpected failure (a caught exception) */
  GSF_STATUS_NOT_IMPLEMENTED = 6,    /* the operation exists but this plugin does not do it */
  GSF_STATUS_PERMISSION_DENIED = 7,  /* the caller may not do this */
  GSF_STATUS_UNAUTHENTICATED = 8,    /* the caller is not who it must be */
  GSF_STATUS_RESOURCE_EXHAUSTED = 9, /* a limit was reached (handlers, sizes, rates) */
  GSF_STATUS_EXPIRED = 10            /* the call's event has ended or timed out */
};

/** Text of a status code ("OK", "INVALID_ARGUMENT", ...). @since 1.0 */
static inline const char* gsf_status_name(gsf_type_status status) {
  static const char* const names[] = {
    "OK", "INVALID_ARGUMENT", "NOT_FOUND", "CONFLICT", "UNAVAILABLE", "INTERNAL",
    "NOT_IMPLEMENTED", "PERMISSION_DENIED", "UNAUTHENTICATED", "RESOURCE_EXHAUSTED", "EXPIRED"};
  return status >= 0 && status <= GSF_STATUS_EXPIRED ? names[status] : "UNKNOWN";
}

/** UTF-8 text owned by whoever passes it; valid during the call only. @since 1.0 */
typedef struct gsf_type_borrowed_str {
  const char* ptr;
  size_t len;
} gsf_type_borrowed_str;

/** Bytes owned by whoever passes them; valid during the call only. @since 1.0 */
typedef struct gsf_type_borrowed_bytes {
  const uint8_t* ptr;
  size_t len;
} gsf_type_borrowed_bytes;

/** Bytes gsf allocated for the plugin; release them with host->mem_free(ptr). @since 1.0 */
typedef struct gsf_type_host_bytes {
  uint8_t* ptr;
  size_t len;
} gsf_type_host_bytes;

/** A borrowed view of a NUL-terminated string (NULL gives the empty string). @since 1.0 */
static inline gsf_type_borrowed_str gsf_str(const char* s) {
  gsf_type_borrowed_str v;
  v.ptr = s ? s : "";
  v.len = s ? strlen(s) : 0;
  return v;
}

/** A borrowed view of `len` bytes. @since 1.0 */
static inline gsf_type_borrowed_bytes gsf_bytes(const void* ptr, size_t len) {
  gsf_type_borrowed_bytes v;
  v.ptr = (const uint8_t*)ptr;
  v.len = len;
  return v;
}

/**
 * The call a hook runs in: init, or one event. Pass it to the callbacks that act on behalf of
 * that call. It is a value, never a pointer: one kept after its call ended is refused
 * (GSF_STATUS_EXPIRED), never dereferenced. Token 0 means "no call" (a thread of the plugin's
 * own); callbacks that can run outside events accept it.
 * @since 1.0
 */
typedef struct gsf_type_call {
  uint64_t token;
} gsf_type_call;

/** The "no call" value. @since 1.0 */
static inline gsf_type_call gsf_no_call(void) {
  gsf_type_call c;
  c.token = 0;
  return c;
}

/** Event kinds (SPEC 6.1); they decide tag inheritance. @since 1.0 */
enum {
  GSF_EVENT_USER = 0,    /* invoked by a plugin */
  GSF_EVENT_NETWORK = 1, /* a client message (tag: the session's) */
  GSF_EVENT_TIMER = 2,   /* a timer (tag: the timer tag) */
  GSF_EVENT_ENGINE = 3,  /* an engine callback (a random tag) */
  GSF_EVENT_API = 4      /* an API-service or console handler (a random tag) */
};

/** Reserved tags. Random, named and session tags lie in [2^32, 2^53). @since 1.0 */
#define GSF_TAG_NULL ((uint64_t)0)
#define GSF_TAG_TIMER ((uint64_t)1)

/** The event a hook runs for; borrowed, valid during the hook only. @since 1.0 */
typedef struct gsf_type_event_info {
  uint32_t struct_size;       /* @since 1.0 */
  uint32_t kind;              /* GSF_EVENT_*; @since 1.0 */
  uint64_t event_id;          /* process-unique; @since 1.0 */
  uint64_t tag;               /* @since 1.0 */
  uint64_t session_id;        /* the session the event belongs to, 0 for none; @since 1.0 */
  gsf_type_borrowed_str name; /* event name (a message's type for message hooks); @since 1.0 */
} gsf_type_event_info;

/** How `invoke` picks the new event's tag. @since 1.0 */
enum {
  GSF_TAG_MODE_DEFAULT = 0, /* SPEC 6.2.4: inherit the running event's tag, else a random one */
  GSF_TAG_MODE_VALUE = 1,   /* options.tag */
  GSF_TAG_MODE_NAMED = 2,   /* host->tag_named(options.tag_name) */
  GSF_TAG_MODE_RANDOM = 3   /* a fresh random tag */
};

/** Options of host->invoke; NULL means all defaults. @since 1.0 */
typedef struct gsf_type_invoke_options {
  uint32_t struct_size;            /* sizeof(gsf_type_invoke_options); @since 1.0 */
  uint32_t tag_mode;               /* GSF_TAG_MODE_*; @since 1.0 */
  uint64_t tag;                    /* GSF_TAG_MODE_VALUE; @since 1.0 */
  gsf_type_borrowed_str tag_name;  /* GSF_TAG_MODE_NAMED; @since 1.0 */
  gsf_type_borrowed_str name;      /* event name; empty: "{parent}_#{n}" inside an event, else the event; @since 1.0 */
} gsf_type_invoke_options;

/** Options initialised to the defaults. @since 1.0 */
static inline gsf_type_invoke_options gsf_invoke_options(void) {
  gsf_type_invoke_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = (uint32_t)sizeof o;
  return o;
}

/** Log levels (glog's); a negative level -n is verbose level n (written when the `v` flag >= n). @since 1.0 */
enum { GSF_LOG_INFO = 0, GSF_LOG_WARNING = 1, GSF_LOG_ERROR = 2 };

/* ---- API-service routes and the operations console (@since 1.1) ----------------------------- */

/** What a response writer answers with (the six kinds, and the sets routes and queries take). @since 1.1 */
enum {
  GSF_ANSWER_VOID = 0,         /* the status only: 204 */
  GSF_ANSWER_BOOL = 1,         /* 200 true / false */
  GSF_ANSWER_JSON_OBJECT = 2,  /* 200 a JSON object */
  GSF_ANSWER_JSON_ARRAY = 3,   /* 200 a JSON array */
  GSF_ANSWER_STRING = 4,       /* 200 a JSON string */
  GSF_ANSWER_STRING_ARRAY = 5, /* 200 a JSON array of strings */
  GSF_ANSWER_JSON = 6,         /* an object or an array (custom queries) */
  GSF_ANSWER_ANY = 255         /* any of the six (plugin routes) */
};

/**
 * A response writer: answers one API request exactly once, with one of host->answer_*. It is a
 * value (a token): answer during the handler, or later from any thread (a continuation, a thread
 * of the plugin's own). A second answer is refused (GSF_STATUS_CONFLICT) and logged, also once
 * the first reached the client; an answer after the request's deadline (it got 504) is refused
 * with GSF_STATUS_EXPIRED. An answer made in the handler goes with the handler's other effects:
 * when its event times out they are dropped, and the request ends with it (504
 * GSF_ERR_HANDLER_EVENT_ENDED); a writer that has not answered may still answer until the deadline.
 * @since 1.1
 */
typedef struct gsf_type_api_writer {
  uint64_t token;
} gsf_type_api_writer;

/** One API request as its handler sees it; borrowed, valid during the hook only. @since 1.1 */
typedef struct gsf_type_api_request {
  uint32_t struct_size;            /* @since 1.1 */
  uint32_t answer_kind;            /* GSF_ANSWER_* the writer takes; @since 1.1 */
  gsf_type_borrowed_str operation; /* "GetUser", "BeginCampaign", "CustomQuery", or "route"; @since 1.1 */
  gsf_type_borrowed_str method;    /* "GET", "POST", ...; @since 1.1 */
  gsf_type_borrowed_str path;      /* the request path, without the query; @since 1.1 */
  /**
   * The arguments as a msgpack map: a console operation's (the fields docs/guides/console.md
   * lists per operation, e.g. {id} or {condition, value, page_no, page_size}), a campaign's {type,
   * campaign}, a custom query's {fields}, a route's {method, path, params, query, body}.
   * @since 1.1
   */
  gsf_type_borrowed_bytes args;
} gsf_type_api_request;

/**
 * Handles one API request: answer through `writer`, now or later. A status other than OK
 * returned before answering fails the request with that status (the message: set_error's).
 * @since 1.1
 */
typedef gsf_type_status (*gsf_on_api)(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer,
                                      void* user_data);

/**
 * The console handler: one hook per operation of SPEC 4.6; NULL leaves an operation unexposed
 * (404 GSF_ERR_NOT_IMPLEMENTED). Fields are appended as operations are added: gsf reads those
 * within struct_size. Each answers with the kind in its comment.
 * @since 1.1
 */
typedef struct gsf_type_console_handlers {
  uint32_t struct_size;                           /* sizeof as the plugin was built; @since 1.1 */
  void* user_data;                                /* passed to every hook; @since 1.1 */
  gsf_on_api get_user_search_conditions;          /* string array; @since 1.1 */
  gsf_on_api search_users;                        /* JSON object {users: [...]}; @since 1.1 */
  gsf_on_api get_user;                            /* JSON object; @since 1.1 */
  gsf_on_api update_user;                         /* void; @since 1.1 */
  gsf_on_api is_logged_in;                        /* bool; @since 1.1 */
  gsf_on_api force_logout;                        /* void; @since 1.1 */
  gsf_on_api get_user_banned;                     /* bool; @since 1.1 */
  gsf_on_api ban_user;                            /* void; @since 1.1 */
  gsf_on_api unban_user;                          /* void; @since 1.1 */
  gsf_on_api get_characters;                      /* JSON array; @since 1.1 */
  gsf_on_api get_character;                       /* JSON object; @since 1.1 */
  gsf_on_api update_character;                    /* void; @since 1.1 */
  gsf_on_api get_character_inventory_info;        /* JSON array; @since 1.1 */
  gsf_on_api get_inventory;                       /* JSON array; @since 1.1 */
  gsf_on_api delete_inventory_item;               /* void; @since 1.1 */
  gsf_on_api delete_multiple_inventory_items;     /* void; @since 1.1 */
  gsf_on_api give_gift;                           /* void; @since 1.1 */
  gsf_on_api give_gift_to_all;                    /* void; @since 1.1 */
  gsf_on_api refund;                              /* void; @since 1.1 */
  gsf_on_api send_realtime_notice;                /* void; @since 1.1 */
  gsf_on_api get_character_periodic_mission_status; /* JSON array; @since 1.1 */
  gsf_on_api get_character_mission_status;        /* JSON array; @since 1.1 */
} gsf_type_console_handlers;

/** A console table with struct_size set and every hook NULL. @since 1.1 */
static inline gsf_type_console_handlers gsf_console_handlers(void) {
  gsf_type_console_handlers h;
  memset(&h, 0, sizeof h);
  h.struct_size = (uint32_t)sizeof h;
  return h;
}

/** Whose fields console_set_editable_fields names. @since 1.1 */
enum { GSF_CONSOLE_ACCOUNT = 0, GSF_CONSOLE_CHARACTER = 1 };

/* ---- objects (@since 1.1) -------------------------------------------------------------------- */

/** How an event fetches an object: read (the last committed copy) or write (checked at commit; may be set). @since 1.1 */
enum { GSF_OBJECT_READ = 0, GSF_OBJECT_WRITE = 1 };

/**
 * Receives an object the event asked for, in the same event after the hook that asked has
 * returned, with a call of its own: `found` 0 when there is none (then `id` and `fields` are
 * empty), else its id and fields as a msgpack map. Fetch more, set fields, answer, invoke here
 * as in any hook; the event's object changes are committed when its last continuation returns.
 * A status other than OK fails the event (logged; an API request unanswered gets 500).
 * @since 1.1
 */
typedef gsf_type_status (*gsf_on_object)(gsf_type_call call, int32_t found, gsf_type_borrowed_str id,
                                         gsf_type_borrowed_bytes fields, void* user_data);

/**
 * Releases user data gsf held for the plugin (a continuation's or a timer's `user_data`). gsf
 * calls it exactly once per piece of user data: after the continuation ran, or when it failed,
 * timed out or was dropped without running. NULL: nothing to release. @since 1.2
 */
typedef void (*gsf_on_drop)(void* user_data);

/* ---- lifecycle, timers with user data and timeout handlers (@since 1.2) ---------------------- */

/**
 * Runs a timer started with host->timer_start, as an event of kind GSF_EVENT_TIMER on the timer
 * tag (one run per firing). Effects as in any event hook; a status other than OK is logged with
 * the plugin and the timer's event name. @since 1.2
 */
typedef gsf_type_status (*gsf_on_timer)(gsf_type_call call, const gsf_type_event_info* event, void* user_data);

/**
 * Called on gsf's main thread (never an event thread) when an event times out, with the event's
 * name, id, tag and session (0: none; `kind` is GSF_EVENT_USER, unknown there): what a managed
 * plugin's onEventTimeout gets. To act on an event thread, invoke an event with `call`. @since 1.2
 */
typedef void (*gsf_on_event_timeout)(gsf_type_call call, const gsf_type_event_info* event, void* user_data);

/* ---- sessions and accounts (@since 1.2) ---------------------------------------------------- */

/**
 * A session as its opened and closed hooks see it; borrowed, valid during the hook only. What a
 * managed plugin's onOpen / onClose handler receives.
 * @since 1.2
 */
typedef struct gsf_type_session_info {
  uint32_t struct_size;          /* @since 1.2 */
  uint32_t close_code;           /* closed: the WebSocket close code (4009, 4010, 1006, ...); opened: 0; @since 1.2 */
  uint64_t session_id;           /* @since 1.2 */
  gsf_type_borrowed_str version; /* opened: the client version from the URL; closed: empty; @since 1.2 */
  gsf_type_borrowed_str codec;   /* opened: "json" or "msgpack"; closed: empty; @since 1.2 */
  gsf_type_borrowed_str address; /* opened: the client's address as text; closed: empty; @since 1.2 */
  gsf_type_borrowed_str reason;  /* closed: the close reason (may be empty); opened: empty; @since 1.2 */
  gsf_type_borrowed_str account; /* closed: the account it was logged in as (empty: none); opened: empty; @since 1.2 */
} gsf_type_session_info;

/**
 * Runs when a session opens (before any of its messages) or has closed (after its last), as an
 * event of kind GSF_EVENT_ENGINE on the session's tag, named "_session_opened" or
 * "_session_closed", with every plugin's hooks of that kind (managed and native) in plugin order.
 * Effects as in any event hook; a status other than OK is logged with the plugin and the session.
 * @since 1.2
 */
typedef gsf_type_status (*gsf_on_session)(gsf_type_call call, const gsf_type_event_info* event,
                                          const gsf_type_session_info* session, void* user_data);

/** Which account call a result answers. @since 1.2 */
enum { GSF_ACCOUNT_LOGIN = 0, GSF_ACCOUNT_LOGOUT = 1, GSF_ACCOUNT_LOCATE = 2, GSF_ACCOUNT_OF_SESSION = 3 };

/** The outcome of a login (a managed login's {ok, reason}). @since 1.2 */
enum {
  GSF_LOGIN_OK = 0,                /* logged in; session_id: the session it replaced (closed with 4009), 0 none */
  GSF_LOGIN_ALREADY_LOGGED_IN = 1, /* refused (account_login_policy "refuse"); session_id: where it is logged in */
  GSF_LOGIN_NO_SESSION = 2         /* the session is not connected (any more) */
};

/** The answer to an account call; borrowed, valid during the continuation only. @since 1.2 */
typedef struct gsf_type_account_result {
  uint32_t struct_size;          /* @since 1.2 */
  uint32_t op;                   /* GSF_ACCOUNT_*: the call this answers; @since 1.2 */
  /**
   * login: 1 when logged in (GSF_LOGIN_OK); logout: 1 when the account was logged in; locate: 1
   * when it is logged in on this server; of_session: 1 when the
   * session is logged in. @since 1.2
   */
  int32_t found;
  uint32_t login;                /* login: GSF_LOGIN_*; others: 0; @since 1.2 */
  /**
   * login: as GSF_LOGIN_* says; locate: the account's session (0: not logged in); of_session:
   * the session asked about; logout: 0. @since 1.2
   */
  uint64_t session_id;
  gsf_type_borrowed_str account; /* the account asked about, or of_session's answer (empty: none); @since 1.2 */
} gsf_type_account_result;

/**
 * Receives the answer to an account call, in the same event after the hook that asked has
 * returned, with a call of its own (as gsf_on_object: the event awaits it, holding its tag).
 * A status other than OK fails the event. @since 1.2
 */
typedef gsf_type_status (*gsf_on_account)(gsf_type_call call, const gsf_type_account_result* result, void* user_data);

/* ---- objects outside events, flags, callable counters, cluster and authenticator (@since 1.2) -- */

/** Which call a gsf_type_call_result answers. @since 1.2 */
enum {
  GSF_CALL_OBJECT_CREATE = 0,          /* object_create */
  GSF_CALL_TRANSACTION = 1,            /* object_transact's `done` */
  GSF_CALL_CLUSTER_INVOKE = 2,         /* cluster_invoke */
  GSF_CALL_CLUSTER_SEND_TO_ACCOUNT = 3, /* cluster_send_to_account */
  GSF_CALL_AUTHENTICATE = 4,           /* auth_authenticate */
  GSF_CALL_PERSONAL_INFO = 5           /* auth_personal_info */
};

/**
 * The answer to an asynchronous 1.2 call; borrowed, valid during the continuation only. On a
 * failure `status` is not OK and `error_code` / `message` are what a managed plugin's call
 * rejects with (GSF_ERR_OBJECT_STATE, GSF_ERR_CLUSTER_UNKNOWN_SERVER, GSF_ERR_AUTH_TIMEOUT, ...).
 * @since 1.2
 */
typedef struct gsf_type_call_result {
  uint32_t struct_size;             /* @since 1.2 */
  uint32_t op;                      /* GSF_CALL_*; @since 1.2 */
  gsf_type_status status;           /* OK, or the failure as a status; @since 1.2 */
  uint32_t reserved;                /* 0; @since 1.2 */
  gsf_type_borrowed_str error_code; /* failure: the managed error code ("GSF_ERR_..."); OK: empty; @since 1.2 */
  gsf_type_borrowed_str message;    /* failure: its message; OK: empty; @since 1.2 */
  /**
   * object_create: the new object's id; cluster_invoke: the server asked. Empty otherwise.
   * @since 1.2
   */
  gsf_type_borrowed_str id;
  /**
   * OK answers, msgpack: object_create: the object's fields as a map ({id, ...fields}, defaults
   * filled in); auth_*: the authenticator's response as a map (the managed response object:
   * {success, reason_code, reason_description}, and `friends` for personal info). Empty
   * otherwise. @since 1.2
   */
  gsf_type_borrowed_bytes value;
  /**
   * cluster_invoke: the event's id on the server that queued it; cluster_send_to_account: 1
   * when the account was logged in (the message went to its session), 0 when not. @since 1.2
   */
  uint64_t number;
} gsf_type_call_result;

/**
 * Receives the answer to an asynchronous 1.2 call (object_create, object_transact's `done`,
 * cluster and authenticator calls) in the same event, after the hook that asked has returned,
 * with a call of its own, as gsf_on_object: the event awaits it, holding its tag. A status other
 * than OK fails the event. @since 1.2
 */
typedef gsf_type_status (*gsf_on_result)(gsf_type_call call, const gsf_type_call_result* result, void* user_data);

/**
 * The body of a transaction started with host->object_transact: runs as an event of its own
 * (kind GSF_EVENT_USER), whose object fetches, creates, sets and deletes (and their
 * continuations) commit as one transaction when its last continuation has returned. On a
 * conflict its changes and effects are dropped and it runs again (up to max_event_reruns),
 * as a managed api.objects.transact. A status other than OK fails it. @since 1.2
 */
typedef gsf_type_status (*gsf_on_transaction)(gsf_type_call call, const gsf_type_event_info* event, void* user_data);

/** Flag types of host->flag_define (a managed flag definition's `type`). @since 1.2 */
enum { GSF_FLAG_BOOL = 0, GSF_FLAG_INT32 = 1, GSF_FLAG_UINT64 = 2, GSF_FLAG_DOUBLE = 3, GSF_FLAG_STRING = 4 };

/**
 * Computes a callable counter's value when it is read (REST /v1/counters, /metrics), on gsf's
 * main thread, as a managed counters.registerCallable callback: write it to `value` and return
 * OK; GSF_STATUS_NOT_FOUND: no value now (the read answers 204). Must not block. @since 1.2
 */
typedef gsf_type_status (*gsf_on_counter)(gsf_type_borrowed_str category, gsf_type_borrowed_str name, double* value,
                                          void* user_data);

/* ---- hooks the plugin implements ------------------------------------------------------------ */

struct gsf_type_host_api;

/**
 * Runs once per process, on load, before any event. Register handlers here. On failure, set a
 * message with host->set_error(call, ...) and return the status: the start stops with it.
 * @since 1.0
 */
typedef gsf_type_status (*gsf_on_init)(const struct gsf_type_host_api* host, gsf_type_call call);

/**
 * Handles a named event. `payload` is the event's msgpack payload (empty when none was given).
 * A status other than OK is logged with the plugin and event names; set a message with
 * host->set_error first. @since 1.0
 */
typedef gsf_type_status (*gsf_on_event)(gsf_type_call call, const gsf_type_event_info* event,
                                        gsf_type_borrowed_bytes payload, void* user_data);

/**
 * Handles a client message of one type. `body` is the message body as msgpack, whichever codec
 * the session uses (empty when the message had no body); answer with host->reply. A status
 * other than OK is logged and the client gets GSF_ERR_MESSAGE_HANDLER_FAILED. @since 1.0
 */
typedef gsf_type_status (*gsf_on_message)(gsf_type_call call, const gsf_type_event_info* event,
                                          gsf_type_borrowed_bytes body, void* user_data);

/**
 * Runs once the server serves: after every plugin's init and gsf's own start, on the main
 * thread, as a managed plugin's onStart (and after a reload switched to this copy). `call` is a
 * call of no event: log, invoke, start timers. A status other than OK stops the start (a reload
 * reports it as a warning), with set_error's message. @since 1.2
 */
typedef gsf_type_status (*gsf_on_start)(const struct gsf_type_host_api* host, gsf_type_call call);

/**
 * Runs when the server stops (before the queue drains) and before a reload replaces this copy,
 * as a managed plugin's onStop, on a thread of its own. Finish by `deadline_ms` (milliseconds
 * since the Unix epoch, the clock of CLOCK_REALTIME and Date.now()): past it gsf logs that the
 * hook overran and goes on without waiting. A status other than OK is logged. @since 1.2
 */
typedef gsf_type_status (*gsf_on_stop)(const struct gsf_type_host_api* host, gsf_type_call call, int64_t deadline_ms);

/**
 * Runs before a reload retires this copy of the library (after its last event ended), last of
 * all its hooks: stop the copy's own threads here. gsf has already ended the copy's timers and
 * released the user data it held for it (gsf_on_drop). Not run when a server stops: the copy
 * stays loaded and serves the next server the process starts; stop threads a stop should end
 * in on_stop. @since 1.2
 */
typedef void (*gsf_on_unload)(const struct gsf_type_host_api* host, gsf_type_call call);

/* ---- the plugin descriptor ------------------------------------------------------------------ */

/**
 * What a plugin exports as GSF_PLUGIN_ENTRY_SYMBOL. Plain data: gsf checks it before running
 * any function of the plugin. @since 1.0
 */
typedef struct gsf_type_plugin {
  uint32_t struct_size; /* sizeof(gsf_type_plugin) as the plugin was built; @since 1.0 */
  uint16_t abi_major;   /* GSF_PLUGIN_ABI_MAJOR; @since 1.0 */
  uint16_t abi_minor;   /* GSF_PLUGIN_ABI_MINOR; @since 1.0 */
  const char* name;     /* NUL-terminated, unique among the server's plugins; @since 1.0 */
  const char* version;  /* NUL-terminated; @since 1.0 */
  gsf_on_init init;     /* @since 1.0 */
  /* The lifecycle extension: read only within struct_size (a plugin of an older minor has none). */
  gsf_on_start on_start;   /* NULL: none; @since 1.2 */
  gsf_on_stop on_stop;     /* NULL: none; @since 1.2 */
  gsf_on_unload on_unload; /* NULL: none; @since 1.2 */
} gsf_type_plugin;

/** The descriptor's size in ABI 1.0 and 1.1 (before the lifecycle extension). @since 1.2 */
#define GSF_PLUGIN_DESCRIPTOR_SIZE_1_0 ((uint32_t)offsetof(gsf_type_plugin, on_start))

/** The descriptor's size of the targeted minor: what GSF_PLUGIN_DEFINE stamps. @since 1.2 */
#if GSF_TARGET_ABI_MINOR >= 2
#define GSF_PLUGIN_DESCRIPTOR_SIZE ((uint32_t)sizeof(gsf_type_plugin))
#else
#define GSF_PLUGIN_DESCRIPTOR_SIZE GSF_PLUGIN_DESCRIPTOR_SIZE_1_0
#endif

#ifdef __cplusplus
#define GSF_PLUGIN_EXTERN_C extern "C"
#else
#define GSF_PLUGIN_EXTERN_C
#endif

/**
 * Defines the plugin's descriptor: GSF_PLUGIN_DEFINE("name", "1.0.0", init_function). It stamps
 * GSF_TARGET_ABI_MINOR and that minor's descriptor size.
 */
#define GSF_PLUGIN_DEFINE(name, version, init)                                                         \
  GSF_PLUGIN_EXTERN_C GSF_PLUGIN_EXPORT const gsf_type_plugin gsf_plugin_entry_v1 = {                  \
      GSF_PLUGIN_DESCRIPTOR_SIZE, GSF_PLUGIN_ABI_MAJOR, GSF_TARGET_ABI_MINOR, name, version, init, NULL, \
      NULL, NULL}

#if GSF_TARGET_ABI_MINOR >= 2
/**
 * GSF_PLUGIN_DEFINE with the lifecycle hooks (each may be NULL):
 * GSF_PLUGIN_DEFINE_LIFECYCLE("name", "1.0.0", init, on_start, on_stop, on_unload). Needs a
 * target of 1.2 or later. @since 1.2
 */
#define GSF_PLUGIN_DEFINE_LIFECYCLE(name, version, init, on_start, on_stop, on_unload)                   \
  GSF_PLUGIN_EXTERN_C GSF_PLUGIN_EXPORT const gsf_type_plugin gsf_plugin_entry_v1 = {                  \
      GSF_PLUGIN_DESCRIPTOR_SIZE, GSF_PLUGIN_ABI_MAJOR, GSF_TARGET_ABI_MINOR, name, version, init, on_start, \
      on_stop, on_unload}
#endif

/* ---- callbacks gsf implements ---------------------------------------------------------------- */

/**
 * The host-services table gsf passes to init; valid for the life of the process. Fields are
 * only ever appended: a plugin built for minor m may use every field marked @since 1.k, k <= m.
 * A plugin that uses a 1.1 field runs only on gsf 1.1 or later (gsf refuses a newer minor).
 * @since 1.0
 */
typedef struct gsf_type_host_api {
  uint32_t struct_size; /* sizeof the table gsf was built with; @since 1.0 */
  uint16_t abi_major;   /* @since 1.0 */
  uint16_t abi_minor;   /* @since 1.0 */

  /* Memory for gsf_type_host_bytes and anything handed to gsf to keep. @since 1.0 */
  void* (*mem_alloc)(size_t size);
  void* (*mem_realloc)(void* ptr, size_t size);
  void (*mem_free)(void* ptr);

  /** Sets the message that goes with the status the hook is about to return (copied). @since 1.0 */
  void (*set_error)(gsf_type_call call, gsf_type_borrowed_str message);

  /**
   * Writes one log line, prefixed with the plugin's name. Inside a running call the line is
   * released with the call's other effects; with gsf_no_call(), or a call that has ended, it
   * is written at once, prefixed "native" (the host table is shared, so gsf cannot tell which
   * plugin wrote it: put your plugin's name in the text of lines from your own threads). @since 1.0
   */
  void (*log)(gsf_type_call call, int32_t level, gsf_type_borrowed_str text);

  /**
   * Registers the handler of event `name` (init only; UTF-8, 1 to 256 bytes, else
   * GSF_STATUS_INVALID_ARGUMENT). Another handler of that name, in any plugin, is
   * GSF_STATUS_CONFLICT and stops the start naming both plugins. @since 1.0
   */
  gsf_type_status (*register_event)(gsf_type_call init, gsf_type_borrowed_str name, gsf_on_event fn,
                                    void* user_data);

  /**
   * Registers the handler of client messages of `type` (init only; UTF-8, 1 to 256 bytes, not
   * starting with '_', else GSF_STATUS_INVALID_ARGUMENT). @since 1.0
   */
  gsf_type_status (*register_message)(gsf_type_call init, gsf_type_borrowed_str type, gsf_on_message fn,
                                      void* user_data);

  /**
   * Queues event `event` (a registered name, native or managed) with a msgpack payload (empty:
   * none). Tag and name as `options` say (NULL: SPEC 6.2.4 defaults, as a managed invoke).
   * The default name inside an event, "{parent}_#{n}", counts the event's children across all
   * its calls (its continuations go on from its handler's count). `event_id` (may be NULL)
   * receives the new event's id. @since 1.0
   */
  gsf_type_status (*invoke)(gsf_type_call call, gsf_type_borrowed_str event, gsf_type_borrowed_bytes payload,
                            const gsf_type_invoke_options* options, uint64_t* event_id);

  /**
   * Answers the message the call is handling: type `type` (empty: the request's type), body
   * `body` (msgpack; empty: no body), the request's id. gsf encodes it in the session's codec.
   * @since 1.0
   */
  gsf_type_status (*reply)(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_bytes body);

  /** Sends a message to a session (unknown or closed sessions are skipped). @since 1.0 */
  gsf_type_status (*send)(gsf_type_call call, uint64_t session_id, gsf_type_borrowed_str type,
                          gsf_type_borrowed_bytes body);

  /** Sends a message to every session in a group. @since 1.0 */
  gsf_type_status (*publish)(gsf_type_call call, gsf_type_borrowed_str group, gsf_type_borrowed_str type,
                             gsf_type_borrowed_bytes body);

  /**
   * Creates a counter with a description unless it exists. For every counter call, the category
   * and the name are non-empty UTF-8 and neither "." nor ".." (no URL could read such a counter):
   * GSF_STATUS_INVALID_ARGUMENT otherwise. @since 1.0
   */
  gsf_type_status (*counter_define)(gsf_type_borrowed_str category, gsf_type_borrowed_str name,
                                    gsf_type_borrowed_str description, double initial, int32_t is_double);
  /** Sets a counter (created if missing). @since 1.0 */
  gsf_type_status (*counter_update)(gsf_type_borrowed_str category, gsf_type_borrowed_str name, double value,
                                    int32_t is_double);
  /** Adds `amount` (negative to decrease); `value` (may be NULL) receives the new value. @since 1.0 */
  gsf_type_status (*counter_increase)(gsf_type_borrowed_str category, gsf_type_borrowed_str name, double amount,
                                      double* value);
  /** Reads a counter; GSF_STATUS_NOT_FOUND if there is none. @since 1.0 */
  gsf_type_status (*counter_read)(gsf_type_borrowed_str category, gsf_type_borrowed_str name, double* value);

  /** The tag named `name`: the same on every thread and every run, and as a managed plugin's. @since 1.0 */
  uint64_t (*tag_named)(gsf_type_borrowed_str name);
  /** A fresh random tag. @since 1.0 */
  uint64_t (*tag_random)(void);

  /**
   * The current value of flag `name` as msgpack, in memory the plugin releases with mem_free.
   * GSF_STATUS_NOT_FOUND for an unknown flag. @since 1.0
   */
  gsf_type_status (*flag_get)(gsf_type_borrowed_str name, gsf_type_host_bytes* value);

  /** Fires event `event` once after `delay_ms`, on the timer tag; `timer_id` may be NULL. @since 1.0 */
  gsf_type_status (*timer_after)(gsf_type_call call, double delay_ms, gsf_type_borrowed_str event,
                                 gsf_type_borrowed_bytes payload, uint64_t* timer_id);
  /** Fires event `event` every `interval_ms` (> 0), on the timer tag. @since 1.0 */
  gsf_type_status (*timer_every)(gsf_type_call call, double interval_ms, gsf_type_borrowed_str event,
                                 gsf_type_borrowed_bytes payload, uint64_t* timer_id);
  /** Cancels a timer; GSF_STATUS_NOT_FOUND if it is unknown or a one-shot that fired. @since 1.0 */
  gsf_type_status (*timer_cancel)(uint64_t timer_id);

#if GSF_TARGET_ABI_MINOR >= 1
  /* ---- API-service routes (@since 1.1) ---- */

  /**
   * Serves `method` (GET, POST, PUT, DELETE, PATCH) `path` on the API service (init only). `{name}`
   * segments are parameters. The handler runs as an event of kind GSF_EVENT_API with a random
   * tag, named `event_name` (empty: api.<plugin>.<METHOD>.<path words>), and answers any kind.
   * A route some path would share with another plugin's or gsf's stops the start naming both.
   * @since 1.1
   */
  gsf_type_status (*register_route)(gsf_type_call init, gsf_type_borrowed_str method, gsf_type_borrowed_str path,
                                    gsf_type_borrowed_str event_name, gsf_on_api fn, void* user_data);

  /* ---- the operations console (@since 1.1; DeployApiService with deploy_api_service_use_managed false) ---- */

  /** Registers the console handler table (init only; copied). One plugin per operation. @since 1.1 */
  gsf_type_status (*console_register_handlers)(gsf_type_call init, const gsf_type_console_handlers* handlers);
  /** SetEditableFieldsForUser / ForCharacter: `target` GSF_CONSOLE_ACCOUNT or _CHARACTER (init only). @since 1.1 */
  gsf_type_status (*console_set_editable_fields)(gsf_type_call init, uint32_t target, const gsf_type_borrowed_str* fields,
                                                 size_t count);
  /** SetGiftableItems: item ids and their names, `count` of each (init only). @since 1.1 */
  gsf_type_status (*console_set_giftable_items)(gsf_type_call init, const gsf_type_borrowed_str* item_ids,
                                                const gsf_type_borrowed_str* names, size_t count);
  /** SetRealtimeNoticeCategory: notice channels besides "all" (init only). @since 1.1 */
  gsf_type_status (*console_set_notice_categories)(gsf_type_call init, const gsf_type_borrowed_str* categories, size_t count);
  /** SetMissionCategory: categories of normal and of achievement missions (init only). @since 1.1 */
  gsf_type_status (*console_set_mission_categories)(gsf_type_call init, const gsf_type_borrowed_str* normal, size_t normal_count,
                                                    const gsf_type_borrowed_str* achievement, size_t achievement_count);
  /** RegisterCampaignType with its begin and end callbacks (void answers; init only). @since 1.1 */
  gsf_type_status (*console_register_campaign_type)(gsf_type_call init, gsf_type_borrowed_str type, gsf_on_api begin,
                                                    gsf_on_api end, void* user_data);
  /**
   * RegisterCustomQueryHandler: served at `method` /cs-api/v1/custom-queries/<uri>/ (init only).
   * Requests without every request field get 400 and `fn` is not called. `response_fields`
   * NULL: not set (each answer logs a warning). The handler answers a JSON object or array.
   * @since 1.1
   */
  gsf_type_status (*console_register_custom_query)(gsf_type_call init, gsf_type_borrowed_str name, gsf_type_borrowed_str method,
                                                   gsf_type_borrowed_str uri, const gsf_type_borrowed_str* request_fields,
                                                   size_t request_count, const gsf_type_borrowed_str* response_fields,
                                                   size_t response_count, gsf_on_api fn, void* user_data);

  /* ---- response writers (@since 1.1): each answers once; see gsf_type_api_writer ---- */

  /** Answers the status only (204). @since 1.1 */
  gsf_type_status (*answer_void)(gsf_type_api_writer writer);
  /** Answers true (non-zero) or false. @since 1.1 */
  gsf_type_status (*answer_bool)(gsf_type_api_writer writer, int32_t value);
  /** Answers a JSON object or array, given as msgpack (a map or an array, as the writer's kind says). @since 1.1 */
  gsf_type_status (*answer_json)(gsf_type_api_writer writer, gsf_type_borrowed_bytes value);
  /** Answers a string. @since 1.1 */
  gsf_type_status (*answer_string)(gsf_type_api_writer writer, gsf_type_borrowed_str value);
  /** Answers an array of `count` strings. @since 1.1 */
  gsf_type_status (*answer_string_array)(gsf_type_api_writer writer, const gsf_type_borrowed_str* items, size_t count);
  /** Fails the request with `status` (not OK) and a message for the caller; docs/reference/errors.md maps statuses to HTTP. @since 1.1 */
  gsf_type_status (*answer_error)(gsf_type_api_writer writer, gsf_type_status status, gsf_type_borrowed_str message);

  /* ---- objects of the running event (@since 1.1; types declared in the objects folders) ---- */

  /**
   * Fetches object `id` of `type` for the event: `then` runs once this hook has returned (see
   * gsf_on_object). With GSF_OBJECT_WRITE the event may set its fields. @since 1.1
   */
  gsf_type_status (*object_fetch)(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str id, uint32_t mode,
                                  gsf_on_object then, void* user_data);
  /** Fetches the object of `type` whose unique field `field` holds `key` (one msgpack value). @since 1.1 */
  gsf_type_status (*object_fetch_by)(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str field,
                                     gsf_type_borrowed_bytes key, uint32_t mode, gsf_on_object then, void* user_data);
  /**
   * Sets fields (a msgpack map) of an object this event fetched with GSF_OBJECT_WRITE, committed
   * with the event's other changes. A field or value the declaration refuses fails the event.
   * @since 1.1
   */
  gsf_type_status (*object_set)(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str id,
                                gsf_type_borrowed_bytes fields);

#endif /* GSF_TARGET_ABI_MINOR >= 1 */

#if GSF_TARGET_ABI_MINOR >= 2
  /* ---- sessions and accounts (@since 1.2) ---- */

  /**
   * Registers a hook run when a session opens (init only), as a managed sessions.onOpen. `drop`
   * (may be NULL) releases `user_data` when a reload retires the copy. A copy is loaded once per
   * process and serves every server started in it, so without a reload the hook lives as long
   * as the process (no `drop` at exit). @since 1.2
   */
  gsf_type_status (*register_session_opened)(gsf_type_call init, gsf_on_session fn, void* user_data, gsf_on_drop drop);
  /** Registers a hook run when a session has closed (init only), as sessions.onClose; `drop` as above. @since 1.2 */
  gsf_type_status (*register_session_closed)(gsf_type_call init, gsf_on_session fn, void* user_data, gsf_on_drop drop);
  /**
   * Adds session `session_id` to group `group` (rooms, matches: publish reaches its members); it
   * leaves every group when it closes. An effect of the call, released with its other effects in
   * order (an unknown or closed session is skipped), as sessions.join. @since 1.2
   */
  gsf_type_status (*session_join)(gsf_type_call call, uint64_t session_id, gsf_type_borrowed_str group);
  /** Removes a session from a group, as session_join. @since 1.2 */
  gsf_type_status (*session_leave)(gsf_type_call call, uint64_t session_id, gsf_type_borrowed_str group);
  /**
   * Closes a session with close code 4010 and `reason` (UTF-8, may be empty; at most 123 bytes
   * are sent), after the frames the call sent it before, as sessions.close. @since 1.2
   */
  gsf_type_status (*session_close)(gsf_type_call call, uint64_t session_id, gsf_type_borrowed_str reason);
  /**
   * Sends one message to `count` sessions, or with `session_ids` NULL (and `count` 0) to every
   * session, as sessions.broadcast. @since 1.2
   */
  gsf_type_status (*broadcast)(gsf_type_call call, const uint64_t* session_ids, size_t count, gsf_type_borrowed_str type,
                               gsf_type_borrowed_bytes body);
  /**
   * Logs `account` in on session `session_id` (0: the event's session), as accounts.login: one
   * session per account, the second login replaces the first (closed with 4009) or is refused, as
   * account_login_policy says. The answer goes to `then` (may be NULL: not needed) in the same
   * event; `drop` (may be NULL) releases `user_data` exactly once, after `then` ran or when the
   * event failed, timed out or ended without running it. Inside events only; on a status other
   * than OK nothing was kept. @since 1.2
   */
  gsf_type_status (*account_login)(gsf_type_call call, gsf_type_borrowed_str account, uint64_t session_id, gsf_on_account then,
                                   void* user_data, gsf_on_drop drop);
  /** Logs `account` out (its session stays open), as accounts.logout; `then` may be NULL. @since 1.2 */
  gsf_type_status (*account_logout)(gsf_type_call call, gsf_type_borrowed_str account, gsf_on_account then, void* user_data,
                                    gsf_on_drop drop);
  /** Finds the session `account` is logged in on, as accounts.locate / isLoggedIn. @since 1.2 */
  gsf_type_status (*account_locate)(gsf_type_call call, gsf_type_borrowed_str account, gsf_on_account then, void* user_data,
                                    gsf_on_drop drop);
  /** The account session `session_id` is logged in as, as accounts.accountOf. @since 1.2 */
  gsf_type_status (*account_of_session)(gsf_type_call call, uint64_t session_id, gsf_on_account then, void* user_data,
                                        gsf_on_drop drop);

  /* ---- lifecycle, destructors and timeouts (@since 1.2) ---- */

  /**
   * object_fetch with a destructor: `drop` (may be NULL) releases `user_data` exactly once, after
   * `then` ran, or when the event failed, timed out or ended without running it (then `then`
   * never runs). On a status other than OK nothing was kept: `drop` is not called. @since 1.2
   */
  gsf_type_status (*object_fetch_v2)(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str id, uint32_t mode,
                                     gsf_on_object then, void* user_data, gsf_on_drop drop);
  /** object_fetch_by with a destructor, as object_fetch_v2. @since 1.2 */
  gsf_type_status (*object_fetch_by_v2)(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str field,
                                        gsf_type_borrowed_bytes key, uint32_t mode, gsf_on_object then, void* user_data,
                                        gsf_on_drop drop);
  /**
   * Starts a timer that runs `fn` with `user_data` after `delay_ms`, then every `interval_ms` if
   * > 0, as an event named `name` (empty: "timer.<plugin>") on the timer tag. `drop` (may be
   * NULL) releases `user_data` exactly once: after a one-shot's run, at timer_cancel, or when gsf
   * ends the timer (a reload retires the copy that started it, or the server stops). `timer_id`
   * may be NULL. On a status other than OK nothing was kept. @since 1.2
   */
  gsf_type_status (*timer_start)(gsf_type_call call, double delay_ms, double interval_ms, gsf_type_borrowed_str name,
                                 gsf_on_timer fn, void* user_data, gsf_on_drop drop, uint64_t* timer_id);
  /**
   * Registers a handler called when any event times out (init only; see gsf_on_event_timeout),
   * as a managed onEventTimeout. `drop` (may be NULL) releases `user_data` when a reload retires
   * the copy (as for register_session_opened: not when a server stops). @since 1.2
   */
  gsf_type_status (*register_timeout_handler)(gsf_type_call init, gsf_on_event_timeout fn, void* user_data, gsf_on_drop drop);

  /* ---- objects outside events, flags, callable counters and monitors (@since 1.2) ---- */

  /**
   * Creates an object of `type` in the running event, with `fields` (a msgpack map; empty: the
   * declared defaults) and id `id` (empty: a random UUID), as a managed objects.create: it is
   * committed with the event's other changes. The outcome goes to `then` (may be NULL) in the
   * same event: OK with the id and fields, or an id this event already holds
   * (GSF_STATUS_CONFLICT, GSF_ERR_OBJECT_STATE) or a field or value the declaration refuses
   * (GSF_STATUS_INVALID_ARGUMENT, GSF_ERR_OBJECT_VALUE); with `then` NULL such a failure fails
   * the event. An id another event committed first is a commit conflict (rerun, then
   * GSF_ERR_OBJECT_CONFLICT). `drop` (may be NULL) releases `user_data` exactly once. Inside
   * events only. @since 1.2
   */
  gsf_type_status (*object_create)(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str id,
                                   gsf_type_borrowed_bytes fields, gsf_on_result then, void* user_data, gsf_on_drop drop);
  /**
   * Deletes object `id` of `type`, which this event fetched (either mode) or created, with the
   * event's other changes, as objects.delete; one it did not fetch or create fails the event.
   * Inside events only. @since 1.2
   */
  gsf_type_status (*object_delete)(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str id);
  /**
   * Reads object `id` of `type` from the server's object cache, without waiting (as
   * objects.fetchCached outside a transaction), on any thread (a thread of the plugin's own
   * too): OK with its fields ({id, ...fields}, msgpack, in memory released with mem_free);
   * GSF_STATUS_NOT_FOUND when the cache knows there is no such object; GSF_STATUS_UNAVAILABLE
   * when the cache does not hold it (only the database can tell: fetch it) or the server has no
   * object store. The last
   * committed copy: what this event changed is not seen. `call` may be gsf_no_call(). @since 1.2
   */
  gsf_type_status (*object_read_cached)(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str id,
                                        gsf_type_host_bytes* fields);
  /**
   * Runs `fn` as a transaction of its own (see gsf_on_transaction), in an event queued now, as
   * api.objects.transact: from init, on_start, a timer, any event (a thread of the plugin's own
   * has no call: invoke an event and start it there). `options` as invoke's
   * (NULL: defaults; the name defaults to "transact.<plugin>"). After its commit (or failure)
   * `done` (may be NULL) runs in the same event with op GSF_CALL_TRANSACTION and the outcome;
   * `drop` (may be NULL) releases `user_data` exactly once, after the last run and `done`, or
   * when gsf ends the transaction unrun (reload, shutdown). `event_id` (may be NULL) receives the
   * event's id. On a status other than OK nothing was kept. @since 1.2
   */
  gsf_type_status (*object_transact)(gsf_type_call call, const gsf_type_invoke_options* options, gsf_on_transaction fn,
                                     gsf_on_result done, void* user_data, gsf_on_drop drop, uint64_t* event_id);
  /**
   * Defines user flag `name` (init only), as a managed flags.define: `type` GSF_FLAG_*, its
   * default `default_value` (one msgpack value of that type: bool, integer in range, number,
   * string) and description `description`. Readable with flag_get, listed and settable over REST
   * /v1/configurations when RuntimeConfiguration.additional_configurations names it. A flag gsf
   * or another plugin defines stops the start naming both. @since 1.2
   */
  gsf_type_status (*flag_define)(gsf_type_call init, gsf_type_borrowed_str name, uint32_t type,
                                 gsf_type_borrowed_bytes default_value, gsf_type_borrowed_str description);
  /**
   * Registers a callable counter (init only): `fn` computes its value when it is read (see
   * gsf_on_counter), as counters.registerCallable. `drop` (may be NULL) releases `user_data` when
   * the copy is retired or the server stops. @since 1.2
   */
  gsf_type_status (*counter_register_callable)(gsf_type_call init, gsf_type_borrowed_str category, gsf_type_borrowed_str name,
                                               gsf_type_borrowed_str description, gsf_on_counter fn, void* user_data,
                                               gsf_on_drop drop);
  /**
   * Monitors counter `category`/`name` (init only), as counters.monitor: every
   * counter_monitoring_interval_in_sec a value above `threshold` (finite) writes the warning
   * line. An unknown counter stops the start. @since 1.2
   */
  gsf_type_status (*counter_monitor)(gsf_type_call init, gsf_type_borrowed_str category, gsf_type_borrowed_str name,
                                     double threshold);

  /* ---- cluster and authenticator calls (@since 1.2) ---- */

  /**
   * Queues event `event` with `payload` (msgpack; empty: none) on server `server_id` of the
   * cluster, as api.cluster.invoke (`options`: tag and name; NULL: a random tag there). `then`
   * (may be NULL) gets the event's id there (number), or NOT_FOUND with
   * GSF_ERR_CLUSTER_UNKNOWN_SERVER (no live server of that id; always, without the Cluster
   * component, as managed), NOT_FOUND with GSF_ERR_UNKNOWN_EVENT (no such event there),
   * UNAVAILABLE (GSF_ERR_CLUSTER_TIMEOUT, GSF_ERR_CLUSTER_UNAVAILABLE). This server's id is the
   * flag cluster_server_id (flag_get; empty without the component). `drop` as object_create's.
   * Inside events only. @since 1.2
   */
  gsf_type_status (*cluster_invoke)(gsf_type_call call, gsf_type_borrowed_str server_id, gsf_type_borrowed_str event,
                                    gsf_type_borrowed_bytes payload, const gsf_type_invoke_options* options, gsf_on_result then,
                                    void* user_data, gsf_on_drop drop);
  /**
   * Sends message `type` with `body` (msgpack; empty: none) to the session `account` is logged
   * in on, on whichever server, as api.cluster.sendToAccount (without the Cluster component: on
   * this server). `then` (may be NULL) gets number 1 when it was sent, 0 when the account is not
   * logged in. `drop` as object_create's. Inside events only. @since 1.2
   */
  gsf_type_status (*cluster_send_to_account)(gsf_type_call call, gsf_type_borrowed_str account, gsf_type_borrowed_str type,
                                             gsf_type_borrowed_bytes body, gsf_on_result then, void* user_data, gsf_on_drop drop);
  /**
   * Asks the authenticator (AuthenticationClient) to authenticate, as api.auth.authenticateAsync:
   * `request` is the managed request as a msgpack map ({platform_type, user_id, authentication_key}).
   * `then` (required) gets the response map (value) when the authenticator answered, whatever
   * its result_code, or a system error: UNAVAILABLE (GSF_ERR_AUTH_UNREACHABLE,
   * GSF_ERR_AUTH_TIMEOUT), INTERNAL (GSF_ERR_AUTH_BAD_ANSWER), INVALID_ARGUMENT (a request the
   * client refuses). With use_authenticator false every request succeeds, as managed.
   * `drop` as object_create's. Inside events only. @since 1.2
   */
  gsf_type_status (*auth_authenticate)(gsf_type_call call, gsf_type_borrowed_bytes request, gsf_on_result then, void* user_data,
                                       gsf_on_drop drop);
  /** The friend list (personal info), as api.auth.getPersonalInfoAsync; as auth_authenticate. @since 1.2 */
  gsf_type_status (*auth_personal_info)(gsf_type_call call, gsf_type_borrowed_bytes request, gsf_on_result then, void* user_data,
                                        gsf_on_drop drop);
#endif /* GSF_TARGET_ABI_MINOR >= 2 */
} gsf_type_host_api;

#ifdef __cplusplus
}
#endif

#endif /* GSF_PLUGIN_H */
