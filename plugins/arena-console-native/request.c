/* Requests in flight: their arguments, the fields of fetched objects, answers and paging. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena_console.h"

arena_req* req_new(const gsf_type_api_request* request, gsf_type_api_writer writer) {
  arena_req* r = (arena_req*)calloc(1, sizeof *r);
  if (r) {
    r->writer = writer;
    r->args = (uint8_t*)malloc(request->args.len ? request->args.len : 1);
    if (!r->args) {
      free(r);
      r = NULL;
    } else {
      memcpy(r->args, request->args.ptr, request->args.len);
      r->args_len = request->args.len;
    }
  }
  if (!r) host->answer_error(writer, GSF_STATUS_RESOURCE_EXHAUSTED, gsf_str("out of memory"));
  return r;
}

static void req_destroy(arena_req* r) {
  size_t i, j;
  for (i = 0; i < r->bag_count; i++) {
    for (j = 0; j < r->bags[i].count; j++) free(r->bags[i].items[j]);
    free(r->bags[i].items);
    free(r->bags[i].quantities);
    free(r->bags[i].player_id);
    free(r->bags[i].name);
  }
  free(r->bags);
  free(r->args);
  free(r->kept);
  free(r->text);
  free(r);
}

/* Holds are changed by the event's thread and, when the event times out, by gsf's main thread. */
void req_free(arena_req* r) {
  if (__atomic_load_n(&r->holds, __ATOMIC_ACQUIRE) == 0) req_destroy(r);
}

void req_drop(void* user_data) {
  arena_req* r = (arena_req*)user_data;
  if (__atomic_sub_fetch(&r->holds, 1, __ATOMIC_ACQ_REL) == 0) req_destroy(r);
}

static void req_hold(arena_req* r) { __atomic_add_fetch(&r->holds, 1, __ATOMIC_ACQ_REL); }

/* A fetch gsf refused keeps nothing: its hold is taken back and the request freed. */
static gsf_type_status fetched(arena_req* r, gsf_type_status status) {
  if (status != GSF_STATUS_OK) {
    __atomic_sub_fetch(&r->holds, 1, __ATOMIC_ACQ_REL);
    req_free(r);
  }
  return status;
}

int field(gsf_type_borrowed_bytes map, const char* key, gsf_mp_reader* out) {
  gsf_mp_reader m;
  gsf_mp_reader_init(&m, map.ptr, map.len);
  return gsf_mp_map_find(&m, key, out);
}

int arg_str(const arena_req* r, const char* key, gsf_type_borrowed_str* out) {
  return field_str(gsf_bytes(r->args, r->args_len), key, out);
}

int64_t arg_int(const arena_req* r, const char* key) {
  return field_int(gsf_bytes(r->args, r->args_len), key);
}

int64_t field_int(gsf_type_borrowed_bytes map, const char* key) {
  gsf_mp_reader v;
  int64_t n = 0;
  if (field(map, key, &v)) gsf_mp_read_int(&v, &n);
  return n;
}

int field_bool(gsf_type_borrowed_bytes map, const char* key) {
  gsf_mp_reader v;
  int b = 0;
  if (field(map, key, &v)) gsf_mp_read_bool(&v, &b);
  return b;
}

int field_str(gsf_type_borrowed_bytes map, const char* key, gsf_type_borrowed_str* out) {
  gsf_mp_reader v;
  if (field(map, key, &v) && gsf_mp_read_str(&v, out)) return 1;
  *out = gsf_str(NULL);
  return 0;
}

void write_field(gsf_mp_writer* w, gsf_type_borrowed_bytes map, const char* key) {
  gsf_mp_reader v;
  const uint8_t* start;
  if (!field(map, key, &v)) {
    gsf_mp_write_nil(w);
    return;
  }
  start = v.p;
  if (!gsf_mp_skip(&v)) {
    gsf_mp_write_nil(w);
    return;
  }
  gsf_mp_write_raw(w, gsf_bytes(start, (size_t)(v.p - start)));
}

int keep_bytes(arena_req* r, gsf_type_borrowed_bytes bytes) {
  uint8_t* copy = (uint8_t*)malloc(bytes.len ? bytes.len : 1);
  if (!copy) return 0;
  memcpy(copy, bytes.ptr, bytes.len);
  free(r->kept);
  r->kept = copy;
  r->kept_len = bytes.len;
  return 1;
}

int keep_text(arena_req* r, gsf_type_borrowed_str text) {
  char* copy = (char*)malloc(text.len + 1);
  if (!copy) return 0;
  memcpy(copy, text.ptr, text.len);
  copy[text.len] = '\0';
  free(r->text);
  r->text = copy;
  r->text_len = text.len;
  return 1;
}

gsf_type_borrowed_str kept_text(const arena_req* r) {
  gsf_type_borrowed_str s;
  s.ptr = r->text ? r->text : "";
  s.len = r->text ? r->text_len : 0;
  return s;
}

int str_is(gsf_type_borrowed_str s, const char* c) {
  return s.len == strlen(c) && memcmp(s.ptr, c, s.len) == 0;
}

int64_t parse_count(gsf_type_borrowed_str s) {
  int64_t n = 0;
  size_t i;
  if (s.len == 0 || s.len > 15) return -1;
  for (i = 0; i < s.len; i++) {
    if (s.ptr[i] < '0' || s.ptr[i] > '9') return -1;
    n = n * 10 + (s.ptr[i] - '0');
  }
  return n;
}

/* A message being formatted; `ok` is 0 once memory ran out. */
typedef struct text {
  char* p;
  size_t len, cap;
  int ok;
} text;

static void put(text* t, const char* s, size_t n) {
  if (!t->ok || n == 0) return;
  if (t->len + n > t->cap) {
    size_t cap = t->cap ? t->cap : 128;
    char* p;
    while (cap < t->len + n) cap *= 2;
    p = (char*)realloc(t->p, cap);
    if (!p) {
      t->ok = 0;
      return;
    }
    t->p = p;
    t->cap = cap;
  }
  memcpy(t->p + t->len, s, n);
  t->len += n;
}

/* vsnprintf stops a %.*s at a NUL byte and needs a buffer size: this keeps every byte. */
void fail(arena_req* r, gsf_type_status status, const char* format, ...) {
  text t = {NULL, 0, 0, 1};
  char number[32];
  const char* f = format;
  va_list args;
  va_start(args, format);
  while (*f) {
    const char* run = f;
    while (*f && *f != '%') f++;
    put(&t, run, (size_t)(f - run));
    if (!*f) break;
    f++;
    if (f[0] == '.' && f[1] == '*' && f[2] == 's') {
      int n = va_arg(args, int);
      const char* s = va_arg(args, const char*);
      put(&t, s, n > 0 ? (size_t)n : 0);
      f += 3;
    } else if (f[0] == 's') {
      const char* s = va_arg(args, const char*);
      put(&t, s, strlen(s));
      f += 1;
    } else if (f[0] == 'd') {
      put(&t, number, (size_t)snprintf(number, sizeof number, "%d", va_arg(args, int)));
      f += 1;
    } else if (f[0] == 'u') {
      put(&t, number, (size_t)snprintf(number, sizeof number, "%u", va_arg(args, unsigned)));
      f += 1;
    } else if (f[0] == 'l' && f[1] == 'l' && f[2] == 'd') {
      put(&t, number, (size_t)snprintf(number, sizeof number, "%lld", va_arg(args, long long)));
      f += 3;
    } else { /* %% (and any conversion this plugin does not use, written as it is) */
      put(&t, "%", 1);
      if (f[0] == '%') f++;
    }
  }
  va_end(args);
  if (t.ok) host->answer_error(r->writer, status, (gsf_type_borrowed_str){t.p ? t.p : "", t.len});
  else host->answer_error(r->writer, GSF_STATUS_RESOURCE_EXHAUSTED, gsf_str("out of memory"));
  free(t.p);
  req_free(r);
}

void answer_json(arena_req* r, gsf_mp_writer* w) {
  if (gsf_mp_writer_ok(w)) host->answer_json(r->writer, gsf_mp_writer_bytes(w));
  else host->answer_error(r->writer, GSF_STATUS_RESOURCE_EXHAUSTED, gsf_str("out of memory"));
  gsf_mp_writer_free(w);
  req_free(r);
}

void answer_void(arena_req* r) {
  host->answer_void(r->writer);
  req_free(r);
}

void answer_bool(arena_req* r, int value) {
  host->answer_bool(r->writer, value);
  req_free(r);
}

void page_range(const arena_req* r, size_t total, size_t* first, size_t* end) {
  uint64_t no = (uint64_t)arg_int(r, "page_no"), size = (uint64_t)arg_int(r, "page_size");
  /* A page past the end starts at the end; page_no alone can be that far, and no * size could wrap. */
  uint64_t a = no >= total ? total : no * size, b = a + size;
  *first = a > total ? total : (size_t)a;
  *end = b > total ? total : (size_t)b;
}

void answer_page(arena_req* r, gsf_mp_writer* items, uint32_t count) {
  size_t first, end, i;
  gsf_mp_reader rd;
  const uint8_t* start = NULL;
  const uint8_t* stop = NULL;
  gsf_mp_writer out;
  page_range(r, count, &first, &end);
  gsf_mp_reader_init(&rd, items->data, items->len);
  for (i = 0; i < end; i++) {
    if (i == first) start = rd.p;
    gsf_mp_skip(&rd);
  }
  stop = rd.p;
  gsf_mp_writer_init(&out);
  gsf_mp_write_array(&out, (uint32_t)(end - first));
  if (start) gsf_mp_write_raw(&out, gsf_bytes(start, (size_t)(stop - start)));
  gsf_mp_writer_free(items);
  answer_json(r, &out);
}

gsf_type_status fetch_player(gsf_type_call call, arena_req* r, gsf_type_borrowed_str name, uint32_t mode, gsf_on_object then) {
  gsf_mp_writer key;
  gsf_type_status status;
  gsf_mp_writer_init(&key);
  gsf_mp_write_str(&key, name.ptr, name.len);
  status = fetch_by(call, r, "ArenaPlayer", "name", gsf_mp_writer_bytes(&key), mode, then);
  gsf_mp_writer_free(&key);
  return status;
}

gsf_type_status fetch_by(gsf_type_call call, arena_req* r, const char* type, const char* field, gsf_type_borrowed_bytes key,
                         uint32_t mode, gsf_on_object then) {
  req_hold(r);
  return fetched(r, host->object_fetch_by_v2(call, gsf_str(type), gsf_str(field), key, mode, then, r, req_drop));
}

gsf_type_status fetch_id(gsf_type_call call, arena_req* r, const char* type, gsf_type_borrowed_str id, uint32_t mode,
                         gsf_on_object then) {
  req_hold(r);
  return fetched(r, host->object_fetch_v2(call, gsf_str(type), id, mode, then, r, req_drop));
}

gsf_type_status locate(gsf_type_call call, arena_req* r, gsf_type_borrowed_str account, gsf_on_account then) {
  req_hold(r);
  return fetched(r, host->account_locate(call, account, then, r, req_drop));
}
