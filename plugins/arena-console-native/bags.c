/*
 * Bags (a player's inventory, id: the account id): reading one, reclaiming items, gifts. Changes
 * are made on copies of the bags and set together at the end, so a request that fails half way
 * changes nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "arena_console.h"

const char* const ITEM_IDS[ITEM_COUNT] = {"gem", "medal", "potion", "sword"};
static const char* const ITEM_NAMES[ITEM_COUNT] = {"Gem", "Medal", "Potion", "Sword"};

static char* copy(gsf_type_borrowed_str s) {
  char* c = (char*)malloc(s.len + 1);
  if (c) {
    memcpy(c, s.ptr, s.len);
    c[s.len] = '\0';
  }
  return c;
}

static arena_bag* find_bag(arena_req* r, gsf_type_borrowed_str name) {
  size_t i;
  for (i = 0; i < r->bag_count; i++) {
    if (str_is(name, r->bags[i].name)) return &r->bags[i];
  }
  return NULL;
}

int64_t* slot(arena_bag* b, gsf_type_borrowed_str item, int create) {
  size_t i;
  for (i = 0; i < b->count; i++) {
    if (str_is(item, b->items[i])) return &b->quantities[i];
  }
  if (!create) return NULL;
  b->items = (char**)realloc(b->items, (b->count + 1) * sizeof *b->items);
  b->quantities = (int64_t*)realloc(b->quantities, (b->count + 1) * sizeof *b->quantities);
  if (!b->items || !b->quantities) abort(); /* an example plugin: out of memory ends the process */
  b->items[b->count] = copy(item);
  b->quantities[b->count] = 0;
  return &b->quantities[b->count++];
}

arena_bag* load_bag(arena_req* r, gsf_type_borrowed_str player_id, gsf_type_borrowed_bytes fields) {
  gsf_type_borrowed_str name, item;
  gsf_mp_reader inv;
  uint32_t n = 0, i;
  arena_bag* b;
  field_str(fields, "name", &name);
  b = find_bag(r, name);
  if (b) return b;
  r->bags = (arena_bag*)realloc(r->bags, (r->bag_count + 1) * sizeof *r->bags);
  if (!r->bags) abort();
  b = &r->bags[r->bag_count++];
  memset(b, 0, sizeof *b);
  b->player_id = copy(player_id);
  b->name = copy(name);
  if (field(fields, "inventory", &inv) && gsf_mp_read_map(&inv, &n)) {
    for (i = 0; i < n && gsf_mp_read_str(&inv, &item); i++) gsf_mp_read_int(&inv, slot(b, item, 1));
  }
  return b;
}

gsf_type_status commit_bags(gsf_type_call call, arena_req* r) {
  size_t i, j;
  for (i = 0; i < r->bag_count; i++) {
    arena_bag* b = &r->bags[i];
    gsf_mp_writer w;
    uint32_t kept = 0;
    gsf_type_status status;
    for (j = 0; j < b->count; j++) kept += b->quantities[j] != 0;
    gsf_mp_writer_init(&w);
    gsf_mp_write_map(&w, 1);
    gsf_mp_write_cstr(&w, "inventory");
    gsf_mp_write_map(&w, kept);
    for (j = 0; j < b->count; j++) {
      if (b->quantities[j] == 0) continue;
      gsf_mp_write_cstr(&w, b->items[j]);
      gsf_mp_write_int(&w, b->quantities[j]);
    }
    status = host->object_set(call, gsf_str("ArenaPlayer"), gsf_str(b->player_id), gsf_mp_writer_bytes(&w));
    gsf_mp_writer_free(&w);
    if (status != GSF_STATUS_OK) {
      req_free(r);
      return status;
    }
  }
  answer_void(r);
  return GSF_STATUS_OK;
}

static int no_bag_type(arena_req* r, gsf_type_borrowed_str type) {
  if (str_is(type, "bag")) return 0;
  fail(r, GSF_STATUS_NOT_FOUND, "no inventory type '%.*s' (arena has 'bag')", (int)type.len, type.ptr);
  return 1;
}

static int by_name(const void* a, const void* b) {
  const gsf_type_borrowed_str* x = (const gsf_type_borrowed_str*)a;
  const gsf_type_borrowed_str* y = (const gsf_type_borrowed_str*)b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->ptr, y->ptr, n);
  return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

static gsf_type_status on_inventory(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                    void* user_data) {
  arena_req* r = (arena_req*)user_data;
  arena_bag* b;
  gsf_type_borrowed_str* items;
  gsf_mp_writer w;
  size_t i, k;
  (void)call;
  if (!found) {
    gsf_type_borrowed_str name;
    arg_str(r, "id", &name);
    fail(r, GSF_STATUS_NOT_FOUND, "no account '%.*s'", (int)name.len, name.ptr);
    return GSF_STATUS_OK;
  }
  b = load_bag(r, id, fields);
  items = (gsf_type_borrowed_str*)calloc(b->count + 1, sizeof *items);
  if (!items) abort();
  for (i = 0; i < b->count; i++) items[i] = gsf_str(b->items[i]);
  qsort(items, b->count, sizeof *items, by_name);
  gsf_mp_writer_init(&w);
  for (i = 0; i < b->count; i++) {
    const char* name = NULL;
    for (k = 0; k < ITEM_COUNT; k++) {
      if (str_is(items[i], ITEM_IDS[k])) name = ITEM_NAMES[k];
    }
    gsf_mp_write_map(&w, 3);
    gsf_mp_write_cstr(&w, "item_id");
    gsf_mp_write_str(&w, items[i].ptr, items[i].len);
    gsf_mp_write_cstr(&w, "name");
    if (name) gsf_mp_write_cstr(&w, name);
    else gsf_mp_write_str(&w, items[i].ptr, items[i].len);
    gsf_mp_write_cstr(&w, "quantity");
    gsf_mp_write_int(&w, *slot(b, items[i], 0));
  }
  free(items);
  answer_page(r, &w, (uint32_t)b->count);
  return GSF_STATUS_OK;
}

gsf_type_status get_inventory(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  arena_req* r = req_new(request, writer);
  gsf_type_borrowed_str type, id;
  (void)user_data;
  if (!r) return GSF_STATUS_OK;
  arg_str(r, "type", &type);
  if (no_bag_type(r, type)) return GSF_STATUS_OK;
  arg_str(r, "id", &id);
  return fetch_player(call, r, id, GSF_OBJECT_READ, on_inventory);
}

/* ---- reclaiming: r->kept holds [{type, id, items: [{item_id, expected_quantity, reclaimed}]}] ---- */

static int inventory_at(arena_req* r, size_t index, gsf_mp_reader* inv) {
  gsf_mp_reader list;
  gsf_mp_reader_init(inv, NULL, 0);
  uint32_t n = 0;
  size_t i;
  gsf_mp_reader_init(&list, r->kept, r->kept_len);
  if (!gsf_mp_read_array(&list, &n) || index >= n) return 0;
  for (i = 0; i < index; i++) gsf_mp_skip(&list);
  *inv = list;
  return 1;
}

static gsf_type_status reclaim_next(gsf_type_call call, arena_req* r);

static gsf_type_status on_reclaim_bag(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                      void* user_data) {
  arena_req* r = (arena_req*)user_data;
  if (!found) {
    gsf_mp_reader inv;
    gsf_type_borrowed_str name;
    inventory_at(r, r->next, &inv);
    field_str(gsf_bytes(inv.p, (size_t)(inv.end - inv.p)), "id", &name);
    fail(r, GSF_STATUS_NOT_FOUND, "no account '%.*s'", (int)name.len, name.ptr);
    return GSF_STATUS_OK;
  }
  load_bag(r, id, fields);
  return reclaim_next(call, r);
}

static gsf_type_status reclaim_next(gsf_type_call call, arena_req* r) {
  gsf_mp_reader inv, items;
  for (; inventory_at(r, r->next, &inv); r->next++) {
    gsf_type_borrowed_bytes map = gsf_bytes(inv.p, (size_t)(inv.end - inv.p));
    gsf_type_borrowed_str type, name, item;
    arena_bag* b;
    uint32_t n = 0, i;
    field_str(map, "type", &type);
    field_str(map, "id", &name);
    if (no_bag_type(r, type)) return GSF_STATUS_OK;
    b = find_bag(r, name);
    if (!b) return fetch_player(call, r, name, GSF_OBJECT_WRITE, on_reclaim_bag);
    field(map, "items", &items);
    gsf_mp_read_array(&items, &n);
    for (i = 0; i < n; i++) {
      gsf_type_borrowed_bytes one = gsf_bytes(items.p, (size_t)(items.end - items.p));
      int64_t expected = field_int(one, "expected_quantity"), reclaimed = field_int(one, "reclaimed");
      int64_t* held;
      field_str(one, "item_id", &item);
      held = slot(b, item, 1);
      if (*held != expected) {
        fail(r, GSF_STATUS_CONFLICT, "the console shows %lld %.*s, the inventory holds %lld", (long long)expected, (int)item.len, item.ptr,
             (long long)*held);
        return GSF_STATUS_OK;
      }
      if (reclaimed > *held) {
        fail(r, GSF_STATUS_INVALID_ARGUMENT, "cannot reclaim %lld %.*s: the inventory holds %lld", (long long)reclaimed, (int)item.len,
             item.ptr, (long long)*held);
        return GSF_STATUS_OK;
      }
      *held -= reclaimed;
      gsf_mp_skip(&items);
    }
  }
  return commit_bags(call, r);
}

gsf_type_status delete_inventory_items(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer,
                                       void* user_data) {
  arena_req* r = req_new(request, writer);
  gsf_mp_reader list;
  gsf_mp_writer w;
  gsf_type_borrowed_str s;
  (void)user_data;
  if (!r) return GSF_STATUS_OK;
  gsf_mp_writer_init(&w);
  if (field(gsf_bytes(r->args, r->args_len), "inventories", &list)) {
    write_field(&w, gsf_bytes(r->args, r->args_len), "inventories");
  } else {
    /* DeleteInventoryItem: one inventory with one item. */
    gsf_mp_write_array(&w, 1);
    gsf_mp_write_map(&w, 3);
    gsf_mp_write_cstr(&w, "type");
    arg_str(r, "type", &s);
    gsf_mp_write_str(&w, s.ptr, s.len);
    gsf_mp_write_cstr(&w, "id");
    arg_str(r, "id", &s);
    gsf_mp_write_str(&w, s.ptr, s.len);
    gsf_mp_write_cstr(&w, "items");
    gsf_mp_write_array(&w, 1);
    gsf_mp_write_map(&w, 3);
    gsf_mp_write_cstr(&w, "item_id");
    arg_str(r, "item_id", &s);
    gsf_mp_write_str(&w, s.ptr, s.len);
    gsf_mp_write_cstr(&w, "expected_quantity");
    gsf_mp_write_int(&w, arg_int(r, "expected_quantity"));
    gsf_mp_write_cstr(&w, "reclaimed");
    gsf_mp_write_int(&w, arg_int(r, "reclaimed"));
  }
  if (!gsf_mp_writer_ok(&w) || !keep_bytes(r, gsf_mp_writer_bytes(&w))) abort();
  gsf_mp_writer_free(&w);
  return reclaim_next(call, r);
}

/* ---- gifts: items from the request's `items` go into each target's bag ---- */

static void add_items(arena_req* r, arena_bag* b) {
  gsf_mp_reader items;
  uint32_t n = 0, i;
  field(gsf_bytes(r->args, r->args_len), "items", &items);
  gsf_mp_read_array(&items, &n);
  for (i = 0; i < n; i++) {
    gsf_type_borrowed_bytes one = gsf_bytes(items.p, (size_t)(items.end - items.p));
    gsf_type_borrowed_str item;
    field_str(one, "item_id", &item);
    *slot(b, item, 1) += field_int(one, "quantity");
    gsf_mp_skip(&items);
  }
}

/* The list a gift walks: the request's `users`, or the roster names kept (gift to all). */
static gsf_type_borrowed_bytes gift_list(const arena_req* r) {
  gsf_mp_reader list;
  if (r->number == 2) return gsf_bytes(r->kept, r->kept_len);
  if (!field(gsf_bytes(r->args, r->args_len), "users", &list)) return gsf_bytes(NULL, 0);
  return gsf_bytes(list.p, (size_t)(list.end - list.p));
}

/* The list's element r->next, read where it starts (r->at): a long list is walked once, not once per element. */
static int gift_target(arena_req* r, gsf_type_borrowed_str* out) {
  gsf_type_borrowed_bytes list = gift_list(r);
  gsf_mp_reader rd;
  uint32_t n = 0;
  gsf_mp_reader_init(&rd, list.ptr, list.len);
  if (!gsf_mp_read_array(&rd, &n) || r->next >= n) return 0;
  if (r->at == 0) r->at = (size_t)(rd.p - list.ptr);
  gsf_mp_reader_init(&rd, list.ptr + r->at, list.len - r->at);
  return gsf_mp_read_str(&rd, out);
}

static void gift_advance(arena_req* r) {
  gsf_type_borrowed_bytes list = gift_list(r);
  gsf_mp_reader rd;
  gsf_mp_reader_init(&rd, list.ptr + r->at, list.len - r->at);
  gsf_mp_skip(&rd);
  r->at = (size_t)(rd.p - list.ptr);
  r->next++;
}

static gsf_type_status gift_next(gsf_type_call call, arena_req* r);

static gsf_type_status on_gift_player(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                      void* user_data) {
  arena_req* r = (arena_req*)user_data;
  if (found) {
    size_t known = r->bag_count;
    arena_bag* b = load_bag(r, id, fields);
    /* An account listed again (by name, or through its character) is gifted once. */
    if (r->bag_count > known) add_items(r, b);
  } else if (r->number != 2) { /* gift to all: players missing from the roster are skipped */
    gsf_type_borrowed_str name;
    gift_target(r, &name);
    fail(r, GSF_STATUS_NOT_FOUND, r->number == 0 ? "no account '%.*s'" : "no account owns character '%.*s'", (int)name.len, name.ptr);
    return GSF_STATUS_OK;
  }
  gift_advance(r);
  return gift_next(call, r);
}

static gsf_type_status on_gift_character(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                         void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str owner;
  if (!found) {
    gsf_type_borrowed_str name;
    gift_target(r, &name);
    fail(r, GSF_STATUS_NOT_FOUND, "no character '%.*s'", (int)name.len, name.ptr);
    return GSF_STATUS_OK;
  }
  if (!field_str(fields, "player", &owner)) return on_gift_player(call, 0, id, fields, r);
  return fetch_id(call, r, "ArenaPlayer", owner, GSF_OBJECT_WRITE, on_gift_player);
}

/* `number`: 0 gift to accounts, 1 to characters, 2 to everyone on the roster (kept). */
static gsf_type_status gift_next(gsf_type_call call, arena_req* r) {
  gsf_type_borrowed_str name;
  if (!gift_target(r, &name)) return commit_bags(call, r);
  if (r->number == 1) return fetch_id(call, r, "ArenaCharacter", name, GSF_OBJECT_READ, on_gift_character);
  return fetch_player(call, r, name, GSF_OBJECT_WRITE, on_gift_player);
}

gsf_type_status give_gift(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  arena_req* r = req_new(request, writer);
  gsf_type_borrowed_str target;
  (void)user_data;
  if (!r) return GSF_STATUS_OK;
  arg_str(r, "target_type", &target);
  r->number = str_is(target, "account") ? 0 : 1;
  return gift_next(call, r);
}

static gsf_type_status on_gift_roster(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                      void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_mp_reader names;
  gsf_mp_writer w;
  (void)id;
  gsf_mp_writer_init(&w);
  if (found && field(fields, "names", &names)) write_field(&w, fields, "names");
  else gsf_mp_write_array(&w, 0);
  if (!gsf_mp_writer_ok(&w) || !keep_bytes(r, gsf_mp_writer_bytes(&w))) abort();
  gsf_mp_writer_free(&w);
  return gift_next(call, r);
}

gsf_type_status give_gift_to_all(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  arena_req* r = req_new(request, writer);
  (void)user_data;
  if (!r) return GSF_STATUS_OK;
  r->number = 2;
  return fetch_id(call, r, "ArenaRoster", gsf_str("roster"), GSF_OBJECT_READ, on_gift_roster);
}
