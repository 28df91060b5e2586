/* Accounts: search, read, edit, logout, ban. An account id is the player's login name. */
#include <string.h>

#include "arena_console.h"

static const char* const CONDITIONS[] = {"name", "name_prefix", "nickname"};

gsf_type_status get_user_search_conditions(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer,
                                           void* user_data) {
  gsf_type_borrowed_str items[3];
  size_t i;
  (void)call, (void)request, (void)user_data;
  for (i = 0; i < 3; i++) items[i] = gsf_str(CONDITIONS[i]);
  return host->answer_string_array(writer, items, 3);
}

/* {users: [{account_id}]} of the request's page of `names` (`count` msgpack strings in `list`). */
static void answer_users(arena_req* r, gsf_mp_writer* list, uint32_t count) {
  size_t first, end, i;
  gsf_mp_reader rd;
  gsf_mp_writer out;
  page_range(r, count, &first, &end);
  gsf_mp_reader_init(&rd, list->data, list->len);
  gsf_mp_writer_init(&out);
  gsf_mp_write_map(&out, 1);
  gsf_mp_write_cstr(&out, "users");
  gsf_mp_write_array(&out, (uint32_t)(end - first));
  for (i = 0; i < end; i++) {
    gsf_type_borrowed_str name = gsf_str(NULL);
    gsf_mp_read_str(&rd, &name);
    if (i < first) continue;
    gsf_mp_write_map(&out, 1);
    gsf_mp_write_cstr(&out, "account_id");
    gsf_mp_write_str(&out, name.ptr, name.len);
  }
  gsf_mp_writer_free(list);
  answer_json(r, &out);
}

static void answer_names(arena_req* r, const gsf_type_borrowed_str* name) {
  gsf_mp_writer list;
  gsf_mp_writer_init(&list);
  if (name) gsf_mp_write_str(&list, name->ptr, name->len);
  answer_users(r, &list, name ? 1 : 0);
}

static gsf_type_status on_search_name(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                      void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str name;
  (void)call, (void)id;
  if (found && field_str(fields, "name", &name)) answer_names(r, &name);
  else answer_names(r, NULL);
  return GSF_STATUS_OK;
}

static gsf_type_status on_search_roster(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                        void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str prefix, name;
  gsf_mp_reader names;
  gsf_mp_writer list;
  uint32_t n = 0, i, matched = 0;
  (void)call, (void)id;
  arg_str(r, "value", &prefix);
  gsf_mp_writer_init(&list);
  if (found && field(fields, "names", &names) && gsf_mp_read_array(&names, &n)) {
    for (i = 0; i < n && gsf_mp_read_str(&names, &name); i++) {
      if (name.len >= prefix.len && memcmp(name.ptr, prefix.ptr, prefix.len) == 0) {
        gsf_mp_write_str(&list, name.ptr, name.len);
        matched++;
      }
    }
  }
  answer_users(r, &list, matched);
  return GSF_STATUS_OK;
}

static gsf_type_status on_search_nickname(gsf_type_call call, int32_t found, gsf_type_borrowed_str id,
                                          gsf_type_borrowed_bytes fields, void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str owner;
  (void)id;
  if (!found || !field_str(fields, "player", &owner)) {
    answer_names(r, NULL);
    return GSF_STATUS_OK;
  }
  return fetch_id(call, r, "ArenaPlayer", owner, GSF_OBJECT_READ, on_search_name);
}

gsf_type_status search_users(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  arena_req* r = req_new(request, writer);
  gsf_type_borrowed_str condition, value;
  gsf_mp_writer key;
  gsf_type_status status;
  (void)user_data;
  if (!r) return GSF_STATUS_OK;
  arg_str(r, "condition", &condition);
  arg_str(r, "value", &value);
  if (str_is(condition, "name")) return fetch_player(call, r, value, GSF_OBJECT_READ, on_search_name);
  if (str_is(condition, "name_prefix")) return fetch_id(call, r, "ArenaRoster", gsf_str("roster"), GSF_OBJECT_READ, on_search_roster);
  if (!str_is(condition, "nickname")) {
    fail(r, GSF_STATUS_INVALID_ARGUMENT, "unknown search condition '%.*s' (name, name_prefix, nickname)", (int)condition.len, condition.ptr);
    return GSF_STATUS_OK;
  }
  gsf_mp_writer_init(&key);
  gsf_mp_write_str(&key, value.ptr, value.len);
  status = fetch_by(call, r, "ArenaCharacter", "nickname", gsf_mp_writer_bytes(&key), GSF_OBJECT_READ, on_search_nickname);
  gsf_mp_writer_free(&key);
  return status;
}

/* The request's account, or the NOT_FOUND answer (then the request is done and 0 is returned). */
static int account(arena_req* r, int32_t found) {
  gsf_type_borrowed_str id;
  if (found) return 1;
  arg_str(r, "id", &id);
  fail(r, GSF_STATUS_NOT_FOUND, "no account '%.*s'", (int)id.len, id.ptr);
  return 0;
}

static gsf_type_status on_get_user(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                   void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str account_id;
  gsf_mp_writer w;
  (void)call, (void)id;
  if (!account(r, found)) return GSF_STATUS_OK;
  arg_str(r, "id", &account_id);
  gsf_mp_writer_init(&w);
  gsf_mp_write_map(&w, 7);
  gsf_mp_write_cstr(&w, "account_id");
  gsf_mp_write_str(&w, account_id.ptr, account_id.len);
  gsf_mp_write_cstr(&w, "name");
  write_field(&w, fields, "name");
  gsf_mp_write_cstr(&w, "score");
  write_field(&w, fields, "score");
  gsf_mp_write_cstr(&w, "banned");
  write_field(&w, fields, "banned");
  gsf_mp_write_cstr(&w, "logged_in");
  gsf_mp_write_bool(&w, field_int(fields, "session") != 0);
  gsf_mp_write_cstr(&w, "joined"); /* a msgpack timestamp: gsf writes it as ISO-8601 text */
  write_field(&w, fields, "joined");
  gsf_mp_write_cstr(&w, "character_id");
  write_field(&w, fields, "character");
  answer_json(r, &w);
  return GSF_STATUS_OK;
}

static gsf_type_status on_update_user(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                      void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str name;
  gsf_mp_writer set;
  gsf_type_status status;
  (void)fields;
  if (!account(r, found)) return GSF_STATUS_OK;
  gsf_mp_writer_init(&set);
  gsf_mp_write_map(&set, 1);
  gsf_mp_write_cstr(&set, "score");
  gsf_mp_write_int(&set, r->number);
  status = host->object_set(call, gsf_str("ArenaPlayer"), id, gsf_mp_writer_bytes(&set));
  gsf_mp_writer_free(&set);
  if (status != GSF_STATUS_OK) {
    req_free(r);
    return status;
  }
  arg_str(r, "id", &name);
  host->counter_update(gsf_str("arena_scores"), name, (double)r->number, 0);
  answer_void(r);
  return GSF_STATUS_OK;
}

/* Sets `banned` (a ban then closes the player's session: kick). */
static gsf_type_status set_banned(gsf_type_call call, gsf_type_borrowed_str id, int banned) {
  gsf_mp_writer set;
  gsf_type_status status;
  gsf_mp_writer_init(&set);
  gsf_mp_write_map(&set, 1);
  gsf_mp_write_cstr(&set, "banned");
  gsf_mp_write_bool(&set, banned);
  status = host->object_set(call, gsf_str("ArenaPlayer"), id, gsf_mp_writer_bytes(&set));
  gsf_mp_writer_free(&set);
  return status;
}

/* Where the player is logged in: closes that session (4010) with the reason, then answers. */
static gsf_type_status on_located(gsf_type_call call, const gsf_type_account_result* located, void* user_data) {
  arena_req* r = (arena_req*)user_data;
  const char* reason = r->number == 3 ? "banned by an operator" : "logged out by an operator";
  if (located->found) {
    gsf_type_status status = host->session_close(call, located->session_id, gsf_str(reason));
    if (status != GSF_STATUS_OK) return status;
  }
  answer_void(r);
  return GSF_STATUS_OK;
}

/* Closes the player's session, if it is logged in (as the managed console's arena.kick): answered by on_located. */
static gsf_type_status kick(gsf_type_call call, arena_req* r) {
  gsf_type_borrowed_str name;
  arg_str(r, "id", &name);
  return locate(call, r, name, on_located);
}

/* One continuation for the account operations that read or write one flag. */
static gsf_type_status on_account(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                  void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_status status = GSF_STATUS_OK;
  if (!account(r, found)) return GSF_STATUS_OK;
  switch (r->number) {
    case 0: answer_bool(r, field_int(fields, "session") != 0); return GSF_STATUS_OK;
    case 1: answer_bool(r, field_bool(fields, "banned")); return GSF_STATUS_OK;
    case 2: return kick(call, r);
    case 3:
      status = set_banned(call, id, 1);
      if (status == GSF_STATUS_OK) return kick(call, r);
      break;
    default: status = set_banned(call, id, 0); break;
  }
  if (status != GSF_STATUS_OK) {
    req_free(r);
    return status;
  }
  answer_void(r);
  return GSF_STATUS_OK;
}

/* Starts an account operation: fetches the account named by `id`, then `then`. */
static gsf_type_status start(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, uint32_t mode,
                             int64_t number, gsf_on_object then) {
  arena_req* r = req_new(request, writer);
  gsf_type_borrowed_str id;
  if (!r) return GSF_STATUS_OK;
  r->number = number;
  arg_str(r, "id", &id);
  return fetch_player(call, r, id, mode, then);
}

gsf_type_status get_user(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  (void)user_data;
  return start(call, request, writer, GSF_OBJECT_READ, 0, on_get_user);
}

gsf_type_status update_user(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  arena_req* r = req_new(request, writer);
  gsf_type_borrowed_str field_name, value, id;
  (void)user_data;
  if (!r) return GSF_STATUS_OK;
  arg_str(r, "field", &field_name);
  arg_str(r, "value", &value);
  r->number = parse_count(value);
  if (!str_is(field_name, "score") || r->number < 0) {
    fail(r, GSF_STATUS_INVALID_ARGUMENT, "score must be an integer >= 0 (got '%.*s')", (int)value.len, value.ptr);
    return GSF_STATUS_OK;
  }
  arg_str(r, "id", &id);
  return fetch_player(call, r, id, GSF_OBJECT_WRITE, on_update_user);
}

gsf_type_status is_logged_in(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  (void)user_data;
  return start(call, request, writer, GSF_OBJECT_READ, 0, on_account);
}

gsf_type_status get_user_banned(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  (void)user_data;
  return start(call, request, writer, GSF_OBJECT_READ, 1, on_account);
}

gsf_type_status force_logout(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  (void)user_data;
  return start(call, request, writer, GSF_OBJECT_READ, 2, on_account);
}

gsf_type_status ban_user(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  (void)user_data;
  return start(call, request, writer, GSF_OBJECT_WRITE, 3, on_account);
}

gsf_type_status unban_user(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  (void)user_data;
  return start(call, request, writer, GSF_OBJECT_WRITE, 4, on_account);
}
