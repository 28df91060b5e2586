/*
 * Refund: the purchase log `{account_id, items: [{item_id, quantity}]}` names the account a
 * purchase credited and what it credited; the items are taken back from the bag (all or nothing)
 * and the receipt is recorded in the account's `refunds`, so a receipt is refunded once. Same
 * checks, order and messages as the managed half.
 */
#include <string.h>

#include "arena_console.h"

/* Most of one item a purchase log may name (keeps quantities exact in both halves). */
#define MAX_PURCHASE_QUANTITY 1000000

/* The bytes of the value `v` reads (v moves past it); empty when it is malformed. */
static gsf_type_borrowed_bytes value_bytes(gsf_mp_reader* v) {
  const uint8_t* start = v->p;
  if (!gsf_mp_skip(v)) return gsf_bytes(NULL, 0);
  return gsf_bytes(start, (size_t)(v->p - start));
}

static gsf_type_borrowed_bytes purchase_log(const arena_req* r) {
  gsf_mp_reader v;
  if (!field(gsf_bytes(r->args, r->args_len), "purchase_log", &v)) return gsf_bytes(NULL, 0);
  return value_bytes(&v);
}

static int is_item(gsf_type_borrowed_str id) {
  size_t k;
  for (k = 0; k < ITEM_COUNT; k++) {
    if (str_is(id, ITEM_IDS[k])) return 1;
  }
  return 0;
}

/* Checks the purchase log; on a problem the request is failed (400) and 0 returned. */
static int purchase_ok(arena_req* r, gsf_type_borrowed_str* account) {
  gsf_type_borrowed_bytes log = purchase_log(r);
  gsf_mp_reader items;
  uint32_t n = 0, i;
  if (!field_str(log, "account_id", account) || account->len == 0) {
    fail(r, GSF_STATUS_INVALID_ARGUMENT, "purchase log 'account_id' must be a non-empty string");
    return 0;
  }
  if (!field(log, "items", &items) || !gsf_mp_read_array(&items, &n) || n == 0) {
    fail(r, GSF_STATUS_INVALID_ARGUMENT, "purchase log 'items' must be a non-empty array of objects");
    return 0;
  }
  for (i = 0; i < n; i++) {
    gsf_type_borrowed_bytes one;
    gsf_type_borrowed_str item;
    gsf_mp_reader q;
    int64_t quantity = 0;
    if (gsf_mp_next_type(&items) != GSF_MP_MAP) {
      fail(r, GSF_STATUS_INVALID_ARGUMENT, "purchase log 'items[%u]' must be an object", (unsigned)i);
      return 0;
    }
    one = value_bytes(&items);
    if (!field_str(one, "item_id", &item) || !is_item(item)) {
      fail(r, GSF_STATUS_INVALID_ARGUMENT, "purchase log 'items[%u].item_id' must be an arena item (gem, medal, potion, sword)", (unsigned)i);
      return 0;
    }
    if (!field(one, "quantity", &q) || !gsf_mp_read_int(&q, &quantity) || quantity < 1 || quantity > MAX_PURCHASE_QUANTITY) {
      fail(r, GSF_STATUS_INVALID_ARGUMENT, "purchase log 'items[%u].quantity' must be an integer from 1 to %d", (unsigned)i,
           MAX_PURCHASE_QUANTITY);
      return 0;
    }
  }
  return 1;
}

/* Sets the account's `refunds` to the stored ones (`list`, at its array header) plus `receipt`. */
static gsf_type_status record_receipt(gsf_type_call call, gsf_type_borrowed_str player_id, gsf_mp_reader list, uint32_t stored,
                                      gsf_type_borrowed_str receipt) {
  gsf_mp_writer w;
  gsf_type_status status;
  const uint8_t* start = list.p;
  uint32_t i;
  for (i = 0; i < stored; i++) gsf_mp_skip(&list);
  gsf_mp_writer_init(&w);
  gsf_mp_write_map(&w, 1);
  gsf_mp_write_cstr(&w, "refunds");
  gsf_mp_write_array(&w, stored + 1);
  if (stored > 0) gsf_mp_write_raw(&w, gsf_bytes(start, (size_t)(list.p - start)));
  gsf_mp_write_str(&w, receipt.ptr, receipt.len);
  status = gsf_mp_writer_ok(&w) ? host->object_set(call, gsf_str("ArenaPlayer"), player_id, gsf_mp_writer_bytes(&w))
                                : GSF_STATUS_RESOURCE_EXHAUSTED;
  gsf_mp_writer_free(&w);
  return status;
}

static gsf_type_status on_refund_player(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                        void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_bytes log = purchase_log(r);
  gsf_type_borrowed_str account, receipt, done;
  gsf_mp_reader refunds, items;
  uint32_t stored = 0, n = 0, i;
  arena_bag* b;
  gsf_type_status status;
  gsf_mp_reader_init(&refunds, NULL, 0);
  field_str(log, "account_id", &account);
  arg_str(r, "receipt_id", &receipt);
  if (!found) {
    fail(r, GSF_STATUS_NOT_FOUND, "no account '%.*s'", (int)account.len, account.ptr);
    return GSF_STATUS_OK;
  }
  if (field(fields, "refunds", &refunds) && gsf_mp_read_array(&refunds, &stored)) {
    gsf_mp_reader each = refunds;
    for (i = 0; i < stored; i++) {
      if (gsf_mp_read_str(&each, &done) && done.len == receipt.len && memcmp(done.ptr, receipt.ptr, done.len) == 0) {
        fail(r, GSF_STATUS_CONFLICT, "receipt '%.*s' is already refunded", (int)receipt.len, receipt.ptr);
        return GSF_STATUS_OK;
      }
    }
  } else {
    gsf_mp_reader_init(&refunds, NULL, 0);
    stored = 0;
  }
  b = load_bag(r, id, fields);
  field(log, "items", &items);
  gsf_mp_read_array(&items, &n);
  for (i = 0; i < n; i++) {
    gsf_type_borrowed_bytes one = value_bytes(&items);
    gsf_type_borrowed_str item;
    int64_t quantity = field_int(one, "quantity");
    int64_t* held;
    field_str(one, "item_id", &item);
    held = slot(b, item, 1);
    if (*held < quantity) {
      fail(r, GSF_STATUS_CONFLICT, "cannot take back %lld %.*s: the inventory holds %lld", (long long)quantity, (int)item.len, item.ptr,
           (long long)*held);
      return GSF_STATUS_OK;
    }
    *held -= quantity;
  }
  if ((status = record_receipt(call, id, refunds, stored, receipt)) != GSF_STATUS_OK) {
    req_free(r);
    return status;
  }
  return commit_bags(call, r);
}

gsf_type_status refund(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  arena_req* r = req_new(request, writer);
  gsf_type_borrowed_str account;
  (void)user_data;
  if (!r || !purchase_ok(r, &account)) return GSF_STATUS_OK;
  return fetch_player(call, r, account, GSF_OBJECT_WRITE, on_refund_player);
}
