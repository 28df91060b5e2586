/* Characters: an account's one character, reading and editing it, its inventory info. */
#include <string.h>

#include "arena_console.h"

/* The request's character, or the NOT_FOUND answer (then the request is done and 0 is returned). */
static int character(arena_req* r, int32_t found) {
  gsf_type_borrowed_str id;
  if (found) return 1;
  arg_str(r, "id", &id);
  fail(r, GSF_STATUS_NOT_FOUND, "no character '%.*s'", (int)id.len, id.ptr);
  return 0;
}

static void write_character(gsf_mp_writer* w, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields, int with_account) {
  gsf_mp_write_map(w, with_account ? 4 : 3);
  gsf_mp_write_cstr(w, "character_id");
  gsf_mp_write_str(w, id.ptr, id.len);
  gsf_mp_write_cstr(w, "nickname");
  write_field(w, fields, "nickname");
  gsf_mp_write_cstr(w, "level");
  write_field(w, fields, "level");
  if (with_account) gsf_mp_write_cstr(w, "account_id");
}

static gsf_type_status on_characters_character(gsf_type_call call, int32_t found, gsf_type_borrowed_str id,
                                               gsf_type_borrowed_bytes fields, void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_mp_writer w;
  (void)call;
  gsf_mp_writer_init(&w);
  gsf_mp_write_array(&w, found ? 1 : 0);
  if (found) write_character(&w, id, fields, 0);
  answer_json(r, &w);
  return GSF_STATUS_OK;
}

static gsf_type_status on_characters_account(gsf_type_call call, int32_t found, gsf_type_borrowed_str id,
                                             gsf_type_borrowed_bytes fields, void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str account, character_id;
  gsf_mp_writer w;
  (void)id;
  if (!found) {
    arg_str(r, "id", &account);
    fail(r, GSF_STATUS_NOT_FOUND, "no account '%.*s'", (int)account.len, account.ptr);
    return GSF_STATUS_OK;
  }
  if (!field_str(fields, "character", &character_id)) {
    gsf_mp_writer_init(&w);
    gsf_mp_write_array(&w, 0);
    answer_json(r, &w);
    return GSF_STATUS_OK;
  }
  return fetch_id(call, r, "ArenaCharacter", character_id, GSF_OBJECT_READ, on_characters_character);
}

gsf_type_status get_characters(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  arena_req* r = req_new(request, writer);
  gsf_type_borrowed_str id;
  (void)user_data;
  if (!r) return GSF_STATUS_OK;
  arg_str(r, "id", &id);
  return fetch_player(call, r, id, GSF_OBJECT_READ, on_characters_account);
}

/* The character's owner arrived: answer with the character (kept) and the owner. `number`: which answer. */
static gsf_type_status on_owner(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str character_id, name;
  gsf_mp_writer w;
  (void)call, (void)id;
  arg_str(r, "id", &character_id);
  gsf_mp_writer_init(&w);
  if (r->number == 0) {
    write_character(&w, character_id, gsf_bytes(r->kept, r->kept_len), 1);
    if (found) write_field(&w, fields, "name");
    else gsf_mp_write_nil(&w);
  } else {
    gsf_mp_write_array(&w, found && field_str(fields, "name", &name) ? 1 : 0);
    if (found && field_str(fields, "name", &name)) {
      gsf_mp_write_map(&w, 2);
      gsf_mp_write_cstr(&w, "type");
      gsf_mp_write_cstr(&w, "bag");
      gsf_mp_write_cstr(&w, "slots");
      gsf_mp_write_array(&w, 1);
      gsf_mp_write_str(&w, name.ptr, name.len);
    }
  }
  answer_json(r, &w);
  return GSF_STATUS_OK;
}

static gsf_type_status on_character(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                    void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str owner = gsf_str(NULL);
  (void)id;
  if (!character(r, found)) return GSF_STATUS_OK;
  if (!keep_bytes(r, fields)) {
    fail(r, GSF_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    return GSF_STATUS_OK;
  }
  if (!field_str(fields, "player", &owner)) return on_owner(call, 0, owner, fields, r);
  return fetch_id(call, r, "ArenaPlayer", owner, GSF_OBJECT_READ, on_owner);
}

static gsf_type_status start_character(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer,
                                       int64_t number) {
  arena_req* r = req_new(request, writer);
  gsf_type_borrowed_str id;
  if (!r) return GSF_STATUS_OK;
  r->number = number;
  arg_str(r, "id", &id);
  return fetch_id(call, r, "ArenaCharacter", id, GSF_OBJECT_READ, on_character);
}

gsf_type_status get_character(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  (void)user_data;
  return start_character(call, request, writer, 0);
}

gsf_type_status get_character_inventory_info(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer,
                                             void* user_data) {
  (void)user_data;
  return start_character(call, request, writer, 1);
}

static gsf_type_status set_character(gsf_type_call call, arena_req* r, const char* field_name, gsf_mp_writer* value) {
  gsf_mp_writer set;
  gsf_type_status status;
  gsf_mp_writer_init(&set);
  gsf_mp_write_map(&set, 1);
  gsf_mp_write_cstr(&set, field_name);
  gsf_mp_write_raw(&set, gsf_mp_writer_bytes(value));
  gsf_mp_writer_free(value);
  status = host->object_set(call, gsf_str("ArenaCharacter"), kept_text(r), gsf_mp_writer_bytes(&set));
  gsf_mp_writer_free(&set);
  if (status != GSF_STATUS_OK) {
    req_free(r);
    return status;
  }
  answer_void(r);
  return GSF_STATUS_OK;
}

/* The holder of the nickname asked for arrived: taken by another character, or set it. */
static gsf_type_status on_nickname_holder(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                          void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str value, mine = kept_text(r);
  gsf_mp_writer v;
  (void)fields;
  arg_str(r, "value", &value);
  if (found && (id.len != mine.len || memcmp(id.ptr, mine.ptr, id.len) != 0)) {
    fail(r, GSF_STATUS_CONFLICT, "nickname '%.*s' is taken", (int)value.len, value.ptr);
    return GSF_STATUS_OK;
  }
  gsf_mp_writer_init(&v);
  gsf_mp_write_str(&v, value.ptr, value.len);
  return set_character(call, r, "nickname", &v);
}

static gsf_type_status on_update_character(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                           void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str field_name, value;
  gsf_mp_writer key;
  gsf_type_status status;
  (void)fields;
  if (!character(r, found)) return GSF_STATUS_OK;
  if (!keep_text(r, id)) {
    fail(r, GSF_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    return GSF_STATUS_OK;
  }
  arg_str(r, "field", &field_name);
  arg_str(r, "value", &value);
  if (str_is(field_name, "level")) {
    int64_t level = parse_count(value);
    if (level < 1 || level > 100) {
      fail(r, GSF_STATUS_INVALID_ARGUMENT, "level must be an integer from 1 to 100 (got '%.*s')", (int)value.len, value.ptr);
      return GSF_STATUS_OK;
    }
    gsf_mp_writer_init(&key);
    gsf_mp_write_int(&key, level);
    return set_character(call, r, "level", &key);
  }
  gsf_mp_writer_init(&key);
  gsf_mp_write_str(&key, value.ptr, value.len);
  status = fetch_by(call, r, "ArenaCharacter", "nickname", gsf_mp_writer_bytes(&key), GSF_OBJECT_READ, on_nickname_holder);
  gsf_mp_writer_free(&key);
  return status;
}

gsf_type_status update_character(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  arena_req* r = req_new(request, writer);
  gsf_type_borrowed_str id;
  (void)user_data;
  if (!r) return GSF_STATUS_OK;
  arg_str(r, "id", &id);
  return fetch_id(call, r, "ArenaCharacter", id, GSF_OBJECT_WRITE, on_update_character);
}
