/* gsf_msgpack.h compiled as C99: a round trip of every type, called from test_msgpack.cc. */
#include <stdio.h>
#include <string.h>

#include "gsf_msgpack.h"

#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (!(cond)) {                                                        \
      snprintf(error, error_len, "%s:%d: %s", __FILE__, __LINE__, #cond); \
      failed = 1;                                                         \
      goto done;                                                          \
    }                                                                     \
  } while (0)

int gsf_msgpack_c_selftest(char* error, size_t error_len);

int gsf_msgpack_c_selftest(char* error, size_t error_len) {
  gsf_mp_writer w;
  gsf_mp_reader r, v;
  uint32_t n;
  int64_t i;
  double d;
  int b, failed = 0;
  gsf_type_borrowed_str s;
  gsf_type_borrowed_bytes bin;
  gsf_mp_writer_init(&w);
  gsf_mp_write_map(&w, 3);
  gsf_mp_write_cstr(&w, "n");
  gsf_mp_write_int(&w, -70000);
  gsf_mp_write_cstr(&w, "list");
  gsf_mp_write_array(&w, 4);
  gsf_mp_write_nil(&w);
  gsf_mp_write_bool(&w, 1);
  gsf_mp_write_double(&w, 2.5);
  gsf_mp_write_bin(&w, "\x01\x02", 2);
  gsf_mp_write_cstr(&w, "s");
  gsf_mp_write_str(&w, "h\xc3\xa9", 3);
  EXPECT(gsf_mp_writer_ok(&w));

  gsf_mp_reader_init(&r, w.data, w.len);
  EXPECT(gsf_mp_map_find(&r, "n", &v) && gsf_mp_read_int(&v, &i) && i == -70000);
  EXPECT(gsf_mp_map_find(&r, "s", &v) && gsf_mp_read_str(&v, &s) && s.len == 3 && memcmp(s.ptr, "h\xc3\xa9", 3) == 0);
  EXPECT(!gsf_mp_map_find(&r, "missing", &v));
  EXPECT(gsf_mp_map_find(&r, "list", &v) && gsf_mp_read_array(&v, &n) && n == 4);
  EXPECT(!gsf_mp_read_bool(&v, &b) && !v.error); /* wrong type: not consumed, no error */
  EXPECT(gsf_mp_read_nil(&v));
  EXPECT(gsf_mp_read_bool(&v, &b) && b == 1);
  EXPECT(!gsf_mp_read_int(&v, &i)); /* 2.5 is not an integer */
  EXPECT(gsf_mp_read_double(&v, &d) && d == 2.5);
  EXPECT(gsf_mp_read_bin(&v, &bin) && bin.len == 2 && bin.ptr[1] == 2);
  EXPECT(gsf_mp_skip(&r) && gsf_mp_at_end(&r));

  /* Truncated input sets the error and stops. */
  gsf_mp_reader_init(&r, w.data, w.len - 1);
  EXPECT(!gsf_mp_skip(&r) && r.error);

  /* A repeated key reads its first value: the lookup stops at the first match. */
  gsf_mp_writer_free(&w);
  gsf_mp_writer_init(&w);
  gsf_mp_write_map(&w, 3);
  gsf_mp_write_cstr(&w, "name");
  gsf_mp_write_cstr(&w, "bob");
  gsf_mp_write_cstr(&w, "x");
  gsf_mp_write_int(&w, 1);
  gsf_mp_write_cstr(&w, "name");
  gsf_mp_write_cstr(&w, "cat");
  EXPECT(gsf_mp_writer_ok(&w));
  gsf_mp_reader_init(&r, w.data, w.len);
  EXPECT(gsf_mp_map_find(&r, "name", &v) && gsf_mp_read_str(&v, &s) && s.len == 3 && memcmp(s.ptr, "bob", 3) == 0);
done:
  gsf_mp_writer_free(&w);
  return failed;
}
