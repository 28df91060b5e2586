// A minimal test harness: TEST cases registered at static-init time, CHECK
// macros that record failures from any thread, and a runner that prints
// "N passed, M failed".
#pragma once

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace check {

struct TestCase {
  const char* name;
  void (*fn)();
};

inline std::vector<TestCase>& Registry() {
  static std::vector<TestCase> tests;
  return tests;
}

struct Register {
  Register(const char* name, void (*fn)()) { Registry().push_back(TestCase{name, fn}); }
};

/** Thrown by REQUIRE to abandon the current test case (main test thread only). */
struct Abort {};

inline std::atomic<int>& FailureCount() {
  static std::atomic<int> count{0};
  return count;
}

inline void Fail(const char* file, int line, const std::string& what) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "  %s:%d: %s\n", file, line, what.c_str());
  FailureCount()++;
}

template <typename T>
void Print(std::ostream& os, const T& v) {
  os << v;
}

inline void Print(std::ostream& os, const std::string& v) { os << '"' << v << '"'; }

template <typename T>
void Print(std::ostream& os, const std::vector<T>& v) {
  os << '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) os << ", ";
    Print(os, v[i]);
  }
  os << ']';
}

template <typename A, typename B>
std::string Describe(const char* ea, const char* eb, const A& a, const B& b) {
  std::ostringstream os;
  os.precision(17);
  os << "expected " << ea << " == " << eb << ", got ";
  Print(os, a);
  os << " vs ";
  Print(os, b);
  return os.str();
}

inline int RunAll(const char* filter) {
  int passed = 0, failed = 0;
  for (const TestCase& t : Registry()) {
    if (filter && !std::strstr(t.name, filter)) continue;
    int before = FailureCount().load();
    try {
      t.fn();
    } catch (const Abort&) {
      // already recorded
    } catch (const std::exception& e) {
      Fail(__FILE__, __LINE__, std::string("unexpected exception: ") + e.what());
    } catch (...) {
      Fail(__FILE__, __LINE__, "unexpected exception");
    }
    if (FailureCount().load() == before) {
      ++passed;
      std::printf("ok   %s\n", t.name);
    } else {
      ++failed;
      std::printf("FAIL %s\n", t.name);
    }
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}

}  // namespace check

#define TEST(name)                                            \
  static void name();                                         \
  static ::check::Register name##_registration(#name, name); \
  static void name()

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (!(cond)) ::check::Fail(__FILE__, __LINE__, "expected " #cond);      \
  } while (0)

#define REQUIRE(cond)                                                       \
  do {                                                                      \
    if (!(cond)) {                                                          \
      ::check::Fail(__FILE__, __LINE__, "required " #cond);                 \
      throw ::check::Abort();                                               \
    }                                                                       \
  } while (0)

#define CHECK_EQ(a, b)                                                                      \
  do {                                                                                      \
    const auto& check_a_ = (a);                                                             \
    const auto& check_b_ = (b);                                                             \
    if (!(check_a_ == check_b_))                                                            \
      ::check::Fail(__FILE__, __LINE__, ::check::Describe(#a, #b, check_a_, check_b_));     \
  } while (0)

#define CHECK_NEAR(a, b, eps)                                                               \
  do {                                                                                      \
    const double check_a_ = (a);                                                            \
    const double check_b_ = (b);                                                            \
    if (!(std::fabs(check_a_ - check_b_) <= (eps)))                                         \
      ::check::Fail(__FILE__, __LINE__, ::check::Describe(#a, #b, check_a_, check_b_));     \
  } while (0)

#define CHECK_THROWS(expr, type)                                                   \
  do {                                                                             \
    bool check_thrown_ = false;                                                    \
    try {                                                                          \
      (void)(expr);                                                                \
    } catch (const type&) {                                                        \
      check_thrown_ = true;                                                        \
    }                                                                              \
    if (!check_thrown_) ::check::Fail(__FILE__, __LINE__, "expected " #expr " to throw " #type); \
  } while (0)
