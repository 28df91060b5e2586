/*
 * gsf_msgpack.h: a small msgpack reader and writer for plugin payloads and message bodies
 * (header-only C99; compiles as C++ too).
 *
 * Writer: appends to a growing buffer; after an allocation failure every write is a no-op and
 * gsf_mp_writer_ok() is false. Integers use the smallest format, the way gsf's JavaScript side
 * (msgpackr) writes numbers: those beyond 32 bits but within +-2^53 become float64, which
 * JavaScript reads as a number (a 64-bit integer format would arrive as a BigInt).
 *
 * Reader: reads one value at a time from a borrowed buffer. A read of the wrong type returns 0
 * and leaves the reader where it was, so the caller may try another type; truncated or
 * malformed input returns 0 and sets `error`. Strings and binaries are borrowed views into the
 * buffer. gsf_mp_read_int also takes a float holding an exact integer, and gsf_mp_read_double
 * any number, because JavaScript does not tell 3 from 3.0.
 *
 *   gsf_mp_reader r; gsf_mp_reader a;
 *   gsf_mp_reader_init(&r, body.ptr, body.len);
 *   int64_t x;
 *   if (gsf_mp_map_find(&r, "a", &a) && gsf_mp_read_int(&a, &x)) { ... }
 */
#ifndef GSF_MSGPACK_H
#define GSF_MSGPACK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gsf_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- writer ------------------------------------------------------------------------------- */

typedef struct gsf_mp_writer {
  uint8_t* data;
  size_t len;
  size_t cap;
  int failed;
} gsf_mp_writer;

static inline void gsf_mp_writer_init(gsf_mp_writer* w) {
  w->data = NULL;
  w->len = 0;
  w->cap = 0;
  w->failed = 0;
}

/** Releases the buffer. */
static inline void gsf_mp_writer_free(gsf_mp_writer* w) {
  free(w->data);
  gsf_mp_writer_init(w);
}

/** Empties the buffer for the next value, keeping its memory. */
static inline void gsf_mp_writer_reset(gsf_mp_writer* w) {
  w->len = 0;
  w->failed = 0;
}

/** Whether every write so far succeeded. */
static inline int gsf_mp_writer_ok(const gsf_mp_writer* w) { return !w->failed; }

/** The bytes written, borrowed from the writer. */
static inline gsf_type_borrowed_bytes gsf_mp_writer_bytes(const gsf_mp_writer* w) {
  return gsf_bytes(w->data, w->len);
}

static inline int gsf_mp__reserve(gsf_mp_writer* w, size_t n) {
  size_t cap;
  uint8_t* grown;
  if (w->failed) return 0;
  if (w->cap - w->len >= n) return 1;
  cap = w->cap ? w->cap : 64;
  while (cap - w->len < n) {
    if (cap > SIZE_MAX / 2) {
      w->failed = 1;
      return 0;
    }
    cap *= 2;
  }
  grown = (uint8_t*)realloc(w->data, cap);
  if (!grown) {
    w->failed = 1;
    return 0;
  }
  w->data = grown;
  w->cap = cap;
  return 1;
}

static inline int gsf_mp__put(gsf_mp_writer* w, const void* bytes, size_t n) {
  if (!gsf_mp__reserve(w, n)) return 0;
  if (n) memcpy(w->data + w->len, bytes, n);
  w->len += n;
  return 1;
}

/* A format byte followed by `size` big-endian bytes of `v`. */
static inline int gsf_mp__head(gsf_mp_writer* w, uint8_t format, uint64_t v, int size) {
  uint8_t b[9];
  int i;
  b[0] = format;
  for (i = 0; i < size; i++) b[1 + i] = (uint8_t)(v >> (8 * (size - 1 - i)));
  return gsf_mp__put(w, b, (size_t)size + 1);
}

static inline int gsf_mp_write_nil(gsf_mp_writer* w) { return gsf_mp__head(w, 0xc0, 0, 0); }

static inline int gsf_mp_write_bool(gsf_mp_writer* w, int v) { return gsf_mp__head(w, v ? 0xc3 : 0xc2, 0, 0); }

static inline int gsf_mp_write_double(gsf_mp_writer* w, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  return gsf_mp__head(w, 0xcb, bits, 8);
}

static inline int gsf_mp_write_uint(gsf_mp_writer* w, uint64_t v) {
  if (v < 0x80) return gsf_mp__head(w, (uint8_t)v, 0, 0);
  if (v <= 0xff) return gsf_mp__head(w, 0xcc, v, 1);
  if (v <= 0xffff) return gsf_mp__head(w, 0xcd, v, 2);
  if (v <= 0xffffffffu) return gsf_mp__head(w, 0xce, v, 4);
  if (v <= ((uint64_t)1 << 53)) return gsf_mp_write_double(w, (double)v);
  return gsf_mp__head(w, 0xcf, v, 8);
}

static inline int gsf_mp_write_int(gsf_mp_writer* w, int64_t v) {
  if (v >= 0) return gsf_mp_write_uint(w, (uint64_t)v);
  if (v >= -32) return gsf_mp__head(w, (uint8_t)(int8_t)v, 0, 0);
  if (v >= -128) return gsf_mp__head(w, 0xd0, (uint64_t)v, 1);
  if (v >= -32768) return gsf_mp__head(w, 0xd1, (uint64_t)v, 2);
  if (v >= -2147483647 - 1) return gsf_mp__head(w, 0xd2, (uint64_t)v, 4);
  if (v >= -((int64_t)1 << 53)) return gsf_mp_write_double(w, (double)v);
  return gsf_mp__head(w, 0xd3, (uint64_t)v, 8);
}

static inline int gsf_mp__sized(gsf_mp_writer* w, size_t n, uint8_t fix, size_t fix_max, uint8_t f8,
                                uint8_t f16, uint8_t f32) {
  if (n <= fix_max && fix) return gsf_mp__head(w, (uint8_t)(fix | n), 0, 0);
  if (n <= 0xff && f8) return gsf_mp__head(w, f8, n, 1);
  if (n <= 0xffff) return gsf_mp__head(w, f16, n, 2);
  if ((uint64_t)n <= 0xffffffffu) return gsf_mp__head(w, f32, n, 4);
  w->failed = 1;
  return 0;
}

static inline int gsf_mp_write_str(gsf_mp_writer* w, const char* s, size_t len) {
  return gsf_mp__sized(w, len, 0xa0, 31, 0xd9, 0xda, 0xdb) && gsf_mp__put(w, s, len);
}

static inline int gsf_mp_write_cstr(gsf_mp_writer* w, const char* s) { return gsf_mp_write_str(w, s, strlen(s)); }

static inline int gsf_mp_write_bin(gsf_mp_writer* w, const void* bytes, size_t len) {
  return gsf_mp__sized(w, len, 0, 0, 0xc4, 0xc5, 0xc6) && gsf_mp__put(w, bytes, len);
}

/** An array header; write `n` values next. */
static inline int gsf_mp_write_array(gsf_mp_writer* w, uint32_t n) {
  return gsf_mp__sized(w, n, 0x90, 15, 0, 0xdc, 0xdd);
}

/** A map header; write `n` keys and values next, alternating. */
static inline int gsf_mp_write_map(gsf_mp_writer* w, uint32_t n) { return gsf_mp__sized(w, n, 0x80, 15, 0, 0xde, 0xdf); }

/** Appends an already encoded value (a payload read elsewhere, a body to echo). */
static inline int gsf_mp_write_raw(gsf_mp_writer* w, gsf_type_borrowed_bytes value) {
  return gsf_mp__put(w, value.ptr, value.len);
}

/* ---- reader ------------------------------------------------------------------------------- */

typedef struct gsf_mp_reader {
  const uint8_t* p;
  const uint8_t* end;
  int error;
} gsf_mp_reader;

/** Value types as gsf_mp_next_type reports them. */
enum {
  GSF_MP_NONE = 0, /* at the end, or after an error */
  GSF_MP_NIL,
  GSF_MP_BOOL,
  GSF_MP_INT,
  GSF_MP_FLOAT,
  GSF_MP_STR,
  GSF_MP_BIN,
  GSF_MP_ARRAY,
  GSF_MP_MAP,
  GSF_MP_EXT /* includes msgpackr's `undefined` (fixext1 type 0) and timestamps (type -1) */
};

static inline void gsf_mp_reader_init(gsf_mp_reader* r, const void* data, size_t len) {
  r->p = (const uint8_t*)data;
  r->end = r->p + len;
  r->error = 0;
}

/** Whether every byte was read and nothing went wrong. */
static inline int gsf_mp_at_end(const gsf_mp_reader* r) { return !r->error && r->p == r->end; }

static inline int gsf_mp_next_type(const gsf_mp_reader* r) {
  uint8_t b;
  if (r->error || r->p >= r->end) return GSF_MP_NONE;
  b = *r->p;
  if (b <= 0x7f || b >= 0xe0 || (b >= 0xcc && b <= 0xd3)) return GSF_MP_INT;
  if (b <= 0x8f || b == 0xde || b == 0xdf) return GSF_MP_MAP;
  if (b <= 0x9f || b == 0xdc || b == 0xdd) return GSF_MP_ARRAY;
  if (b <= 0xbf || (b >= 0xd9 && b <= 0xdb)) return GSF_MP_STR;
  if (b == 0xc0) return GSF_MP_NIL;
  if (b == 0xc2 || b == 0xc3) return GSF_MP_BOOL;
  if (b >= 0xc4 && b <= 0xc6) return GSF_MP_BIN;
  if (b == 0xca || b == 0xcb) return GSF_MP_FLOAT;
  if ((b >= 0xc7 && b <= 0xc9) || (b >= 0xd4 && b <= 0xd8)) return GSF_MP_EXT;
  return GSF_MP_NONE; /* 0xc1 is never used */
}

/* Big-endian unsigned of `size` bytes at p + at; 0 with `error` set if the buffer ends first. */
static inline uint64_t gsf_mp__be(gsf_mp_reader* r, size_t at, int size) {
  uint64_t v = 0;
  int i;
  if ((size_t)(r->end - r->p) < at + (size_t)size) {
    r->error = 1;
    return 0;
  }
  for (i = 0; i < size; i++) v = (v << 8) | r->p[at + (size_t)i];
  return v;
}

static inline int gsf_mp_read_nil(gsf_mp_reader* r) {
  if (gsf_mp_next_type(r) != GSF_MP_NIL) return 0;
  r->p++;
  return 1;
}

static inline int gsf_mp_read_bool(gsf_mp_reader* r, int* v) {
  if (gsf_mp_next_type(r) != GSF_MP_BOOL) return 0;
  *v = *r->p++ == 0xc3;
  return 1;
}

/* Any number as a double, with how many bytes it takes; 0 if the next value is no number. */
static inline int gsf_mp__number(gsf_mp_reader* r, double* d, int64_t* i, int* is_int, size_t* n) {
  uint8_t b = r->error || r->p >= r->end ? 0xc1 : *r->p;
  uint64_t u;
  *is_int = 1;
  if (b <= 0x7f) { *i = b; *n = 1; }
  else if (b >= 0xe0) { *i = (int8_t)b; *n = 1; }
  else if (b >= 0xcc && b <= 0xcf) {
    int size = 1 << (b - 0xcc);
    u = gsf_mp__be(r, 1, size);
    if (r->error) return 0;
    if (u > (uint64_t)INT64_MAX) { *is_int = 0; *d = (double)u; } else *i = (int64_t)u;
    *n = (size_t)size + 1;
  } else if (b >= 0xd0 && b <= 0xd3) {
    int size = 1 << (b - 0xd0);
    u = gsf_mp__be(r, 1, size);
    if (r->error) return 0;
    if (size < 8 && (u >> (size * 8 - 1))) u |= ~(uint64_t)0 << (size * 8); /* sign-extend */
    *i = (int64_t)u;
    *n = (size_t)size + 1;
  } else if (b == 0xca) {
    float f;
    uint32_t bits = (uint32_t)gsf_mp__be(r, 1, 4);
    if (r->error) return 0;
    memcpy(&f, &bits, sizeof f);
    *is_int = 0; *d = f; *n = 5;
  } else if (b == 0xcb) {
    u = gsf_mp__be(r, 1, 8);
    if (r->error) return 0;
    memcpy(d, &u, sizeof *d);
    *is_int = 0; *n = 9;
  } else {
    return 0;
  }
  if (*is_int) *d = (double)*i;
  return 1;
}

/** An integer: any integer format, or a float holding an exact integer in int64's range. */
static inline int gsf_mp_read_int(gsf_mp_reader* r, int64_t* v) {
  double d;
  int64_t i = 0;
  int is_int;
  size_t n;
  if (!gsf_mp__number(r, &d, &i, &is_int, &n)) return 0;
  if (!is_int) {
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || (double)(int64_t)d != d) return 0;
    i = (int64_t)d;
  }
  *v = i;
  r->p += n;
  return 1;
}

/** Any number, as a double. */
static inline int gsf_mp_read_double(gsf_mp_reader* r, double* v) {
  double d;
  int64_t i;
  int is_int;
  size_t n;
  if (!gsf_mp__number(r, &d, &i, &is_int, &n)) return 0;
  *v = d;
  r->p += n;
  return 1;
}

/* Header of a str, bin, array or map: its count and header size. */
static inline int gsf_mp__count(gsf_mp_reader* r, int type, uint64_t* count, size_t* head) {
  uint8_t b;
  int size = 0;
  if (gsf_mp_next_type(r) != type) return 0;
  b = *r->p;
  if (type == GSF_MP_STR && b >= 0xa0 && b <= 0xbf) { *count = b & 0x1f; *head = 1; return 1; }
  if (type == GSF_MP_ARRAY && b >= 0x90 && b <= 0x9f) { *count = b & 0x0f; *head = 1; return 1; }
  if (type == GSF_MP_MAP && b >= 0x80 && b <= 0x8f) { *count = b & 0x0f; *head = 1; return 1; }
  if (b == 0xd9 || b == 0xc4) size = 1;
  else if (b == 0xda || b == 0xc5 || b == 0xdc || b == 0xde) size = 2;
  else size = 4;
  *count = gsf_mp__be(r, 1, size);
  *head = (size_t)size + 1;
  return !r->error;
}

static inline int gsf_mp__span(gsf_mp_reader* r, int type, const uint8_t** ptr, size_t* len) {
  uint64_t count;
  size_t head;
  if (!gsf_mp__count(r, type, &count, &head)) return 0;
  if ((uint64_t)(r->end - r->p - (ptrdiff_t)head) < count) {
    r->error = 1;
    return 0;
  }
  *ptr = r->p + head;
  *len = (size_t)count;
  r->p += head + (size_t)count;
  return 1;
}

/** A string, borrowed from the buffer (not NUL-terminated). */
static inline int gsf_mp_read_str(gsf_mp_reader* r, gsf_type_borrowed_str* s) {
  const uint8_t* p;
  size_t n;
  if (!gsf_mp__span(r, GSF_MP_STR, &p, &n)) return 0;
  s->ptr = (const char*)p;
  s->len = n;
  return 1;
}

/** Binary data, borrowed from the buffer. */
static inline int gsf_mp_read_bin(gsf_mp_reader* r, gsf_type_borrowed_bytes* b) {
  return gsf_mp__span(r, GSF_MP_BIN, &b->ptr, &b->len);
}

/** An array header: `n` values follow. */
static inline int gsf_mp_read_array(gsf_mp_reader* r, uint32_t* n) {
  uint64_t count;
  size_t head;
  if (!gsf_mp__count(r, GSF_MP_ARRAY, &count, &head)) return 0;
  *n = (uint32_t)count;
  r->p += head;
  return 1;
}

/** A map header: `n` key/value pairs follow. */
static inline int gsf_mp_read_map(gsf_mp_reader* r, uint32_t* n) {
  uint64_t count;
  size_t head;
  if (!gsf_mp__count(r, GSF_MP_MAP, &count, &head)) return 0;
  *n = (uint32_t)count;
  r->p += head;
  return 1;
}

/** Skips one whole value (nested ones included) without recursion. */
static inline int gsf_mp_skip(gsf_mp_reader* r) {
  uint64_t pending = 1;
  while (pending > 0) {
    uint8_t b;
    uint64_t count = 0;
    size_t head = 1;
    if (r->error || r->p >= r->end) { r->error = 1; return 0; }
    /* Every value takes at least a byte: more pending values than bytes is malformed. */
    if (pending > (uint64_t)(r->end - r->p)) { r->error = 1; return 0; }
    pending--;
    b = *r->p;
    switch (gsf_mp_next_type(r)) {
      case GSF_MP_NIL: case GSF_MP_BOOL: case GSF_MP_INT: case GSF_MP_FLOAT: {
        double d; int64_t i; int is_int; size_t n;
        if (b == 0xc0 || b == 0xc2 || b == 0xc3) { r->p++; break; }
        if (!gsf_mp__number(r, &d, &i, &is_int, &n)) { r->error = 1; return 0; }
        r->p += n;
        break;
      }
      case GSF_MP_STR: case GSF_MP_BIN: {
        const uint8_t* p; size_t n;
        if (!gsf_mp__span(r, gsf_mp_next_type(r), &p, &n)) { r->error = 1; return 0; }
        break;
      }
      case GSF_MP_ARRAY: case GSF_MP_MAP: {
        int type = gsf_mp_next_type(r);
        if (!gsf_mp__count(r, type, &count, &head)) { r->error = 1; return 0; }
        r->p += head;
        pending += type == GSF_MP_MAP ? 2 * count : count;
        break;
      }
      case GSF_MP_EXT: {
        uint64_t size;
        if (b >= 0xd4 && b <= 0xd8) { size = (uint64_t)1 << (b - 0xd4); head = 2; }
        else { int s = 1 << (b - 0xc7); size = gsf_mp__be(r, 1, s); head = (size_t)s + 2; }
        if (r->error || (uint64_t)(r->end - r->p) < head + size) { r->error = 1; return 0; }
        r->p += head + (size_t)size;
        break;
      }
      default:
        r->error = 1;
        return 0;
    }
  }
  return 1;
}

/**
 * Looks up `key` in the map `map` is positioned at (string keys are compared; others are
 * skipped). On success `value` reads the key's value; `map` itself does not move. A key the map
 * repeats reads its first value (JavaScript keeps the last): the lookup stops at the first match,
 * so looking up a field before a large one costs nothing of the large one.
 */
static inline int gsf_mp_map_find(const gsf_mp_reader* map, const char* key, gsf_mp_reader* value) {
  gsf_mp_reader r = *map;
  uint32_t n, i;
  size_t key_len = strlen(key);
  if (!gsf_mp_read_map(&r, &n)) return 0;
  for (i = 0; i < n; i++) {
    if (gsf_mp_next_type(&r) == GSF_MP_STR) {
      gsf_type_borrowed_str k;
      if (!gsf_mp_read_str(&r, &k)) return 0;
      if (k.len == key_len && memcmp(k.ptr, key, key_len) == 0) {
        *value = r;
        return 1;
      }
    } else if (!gsf_mp_skip(&r)) {
      return 0;
    }
    if (!gsf_mp_skip(&r)) return 0;
  }
  return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* GSF_MSGPACK_H */
