/*
 * The arena's operations-console handlers, native half: the same operations, answers and
 * errors as plugins/arena/console.ts, over the same objects (ArenaPlayer, ArenaCharacter,
 * ArenaRoster). Handlers are continuation-passing: a fetch names the function that runs with
 * the object, in the same event; a request's state travels in an arena_req.
 */
#ifndef ARENA_CONSOLE_H
#define ARENA_CONSOLE_H

#include "gsf_msgpack.h"
#include "gsf_plugin.h"

extern const gsf_type_host_api* host;

/** A bag (a player's inventory) being changed by one request: checked on this copy, set at the end. */
typedef struct arena_bag {
  char* player_id; /* the ArenaPlayer object id, for object_set */
  char* name;      /* the account id */
  size_t count;
  char** items;
  int64_t* quantities;
} arena_bag;

/** One console request in flight: its writer, its arguments and what it gathered so far. */
typedef struct arena_req {
  gsf_type_api_writer writer;
  uint8_t* args; /* the request's arguments (a msgpack map), copied */
  size_t args_len;
  uint8_t* kept; /* bytes kept across a continuation (a fetched object's fields, a list) */
  size_t kept_len;
  char* text;    /* a string kept across a continuation (an id), NUL-terminated; it may hold NULs */
  size_t text_len;
  size_t next;   /* the next element of a list walked one fetch at a time */
  size_t at;     /* where that element starts, in bytes from the list's start (0: not yet found) */
  int64_t number;
  arena_bag* bags;
  size_t bag_count;
  int holds;     /* fetches gsf holds the request for: their destructor (req_drop) frees it last */
} arena_req;

/* ---- request.c: requests, arguments, fields, answers ---- */

/** A request with a copy of its arguments; NULL when out of memory (the request is failed). */
arena_req* req_new(const gsf_type_api_request* request, gsf_type_api_writer writer);
/**
 * The plugin is done with the request (answered or failed): freed now, or by the destructor of
 * the last fetch gsf still holds it for. A fetch's destructor runs whether its continuation ran,
 * failed, timed out or was dropped, so a request whose event fails mid-chain is freed as well.
 */
void req_free(arena_req* r);
/** gsf_on_drop of every fetch: releases the fetch's hold on the request. */
void req_drop(void* user_data);
/** object_fetch_by_v2 with the request as user data, held until req_drop; frees it if the fetch is refused. */
gsf_type_status fetch_by(gsf_type_call call, arena_req* r, const char* type, const char* field, gsf_type_borrowed_bytes key,
                         uint32_t mode, gsf_on_object then);
/** A string argument (borrowed from the request's copy); 0 if there is none. */
int arg_str(const arena_req* r, const char* key, gsf_type_borrowed_str* out);
int64_t arg_int(const arena_req* r, const char* key);
/** A field of `map` (an object's fields); `out` reads its value. */
int field(gsf_type_borrowed_bytes map, const char* key, gsf_mp_reader* out);
int64_t field_int(gsf_type_borrowed_bytes map, const char* key);
int field_bool(gsf_type_borrowed_bytes map, const char* key);
int field_str(gsf_type_borrowed_bytes map, const char* key, gsf_type_borrowed_str* out);
/** Appends the raw msgpack of a field's value (nil when absent). */
void write_field(gsf_mp_writer* w, gsf_type_borrowed_bytes map, const char* key);
/** Keeps a copy of bytes / a string on the request. */
int keep_bytes(arena_req* r, gsf_type_borrowed_bytes bytes);
int keep_text(arena_req* r, gsf_type_borrowed_str text);
/** The string kept by keep_text, with its length. */
gsf_type_borrowed_str kept_text(const arena_req* r);
/** Whether a borrowed string equals a C string. */
int str_is(gsf_type_borrowed_str s, const char* c);
/** A whole number in decimal digits (1 to 15 of them), or -1. */
int64_t parse_count(gsf_type_borrowed_str s);

#if defined(__GNUC__)
#define ARENA_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ARENA_PRINTF(f, a)
#endif
/**
 * Fails the request (answer_error with a formatted message) and frees it. The format takes
 * printf's %.*s (the bytes of a length and pointer, NULs included), %s, %d, %u, %lld and %%;
 * the message has no length limit.
 */
void fail(arena_req* r, gsf_type_status status, const char* format, ...) ARENA_PRINTF(3, 4);
/** Answers with the JSON value in `w` (a map or array), then frees the writer and the request. */
void answer_json(arena_req* r, gsf_mp_writer* w);
void answer_void(arena_req* r);
void answer_bool(arena_req* r, int value);
/** Answers the request's page of `count` entries already written into `items` (one value each). */
void answer_page(arena_req* r, gsf_mp_writer* items, uint32_t count);
/** The range of a page: entries [first, end) of `total`. */
void page_range(const arena_req* r, size_t total, size_t* first, size_t* end);

/** Fetches the player named `name` (fetch by unique key); `then` gets the request. */
gsf_type_status fetch_player(gsf_type_call call, arena_req* r, gsf_type_borrowed_str name, uint32_t mode, gsf_on_object then);
/** Fetches by id, or reports the failure (the request is failed). */
gsf_type_status fetch_id(gsf_type_call call, arena_req* r, const char* type, gsf_type_borrowed_str id, uint32_t mode,
                         gsf_on_object then);
/** account_locate with the request as user data, held until req_drop; frees it if the call is refused. */
gsf_type_status locate(gsf_type_call call, arena_req* r, gsf_type_borrowed_str account, gsf_on_account then);

/* ---- bags.c: a player's bag, changed on a copy ---- */

/** Arena's item ids, sorted. */
#define ITEM_COUNT 4
extern const char* const ITEM_IDS[ITEM_COUNT];
/** The bag of the player just fetched (loaded from its fields the first time). */
arena_bag* load_bag(arena_req* r, gsf_type_borrowed_str player_id, gsf_type_borrowed_bytes fields);
/** The quantity slot of `item` in the bag (added at 0 when `create`), or NULL. */
int64_t* slot(arena_bag* b, gsf_type_borrowed_str item, int create);
/** Sets every changed bag (items at 0 are dropped) and answers OK; the request is freed. */
gsf_type_status commit_bags(gsf_type_call call, arena_req* r);

/* ---- the operations ---- */
gsf_type_status get_user_search_conditions(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status search_users(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status get_user(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status update_user(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status is_logged_in(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status force_logout(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status get_user_banned(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status ban_user(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status unban_user(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status get_characters(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status get_character(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status update_character(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status get_character_inventory_info(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status get_inventory(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status delete_inventory_items(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status give_gift(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status give_gift_to_all(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status refund(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status send_realtime_notice(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status get_periodic_missions(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status get_missions(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status campaign_begin(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status campaign_end(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status query_player_score(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);
gsf_type_status query_roster(gsf_type_call, const gsf_type_api_request*, gsf_type_api_writer, void*);

#endif
