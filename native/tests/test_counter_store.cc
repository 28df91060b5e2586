#include <string>
#include <thread>
#include <vector>

#include "../core/counter_store.h"
#include "check.h"

namespace counter_store_test {

using gsf::CounterStore;
using gsf::CounterValue;

TEST(counter_update_sets_value_and_type) {
  CounterStore c;
  c.Update("engine", "sessions", 12, false);
  CounterValue v;
  REQUIRE(c.Get("engine", "sessions", &v));
  CHECK(!v.is_double);
  CHECK_EQ(v.value, 12.0);
  CHECK_EQ(v.description, std::string());
  c.Update("engine", "sessions", 2.75, true);
  REQUIRE(c.Get("engine", "sessions", &v));
  CHECK(v.is_double);
  CHECK_EQ(v.value, 2.75);
  c.Update("engine", "sessions", 9.9, false);  // an int counter stores the truncated value
  REQUIRE(c.Get("engine", "sessions", &v));
  CHECK(!v.is_double);
  CHECK_EQ(v.value, 9.0);
  CHECK(!c.Get("engine", "nope", &v));
  CHECK(!c.Get("nope", "sessions", &v));
}

TEST(counter_descriptions) {
  CounterStore c;
  std::string d = "players online";
  c.Update("engine", "concurrent_user", 1, false, &d);
  c.Update("engine", "concurrent_user", 2, false);  // keeps the description
  CounterValue v;
  REQUIRE(c.Get("engine", "concurrent_user", &v));
  CHECK_EQ(v.description, d);
  CHECK(c.SetDescription("engine", "concurrent_user", "changed"));
  REQUIRE(c.Get("engine", "concurrent_user", &v));
  CHECK_EQ(v.description, std::string("changed"));
  CHECK_EQ(v.value, 2.0);
  CHECK(!c.SetDescription("engine", "missing", "x"));
}

TEST(counter_increase_creates_and_truncates) {
  CounterStore c;
  CHECK_EQ(c.Increase("game", "kills", 2.7), 2.0);  // created as int at 0, amount truncated
  CHECK_EQ(c.Increase("game", "kills", -2.7), 0.0);
  CHECK_EQ(c.Decrease("game", "kills", 5), -5.0);
  CHECK_EQ(c.Decrease("game", "fresh", 3), -3.0);
  CounterValue v;
  REQUIRE(c.Get("game", "fresh", &v));
  CHECK(!v.is_double);
  c.Update("game", "ratio", 0.5, true);
  CHECK_EQ(c.Increase("game", "ratio", 0.25), 0.75);
  CHECK_EQ(c.Decrease("game", "ratio", 1.0), -0.25);
  int64_t i = 0;
  c.Update("game", "neg", -3.9, true);
  REQUIRE(c.ReadInt("game", "neg", &i));
  CHECK_EQ(i, -3);
  REQUIRE(c.ReadInt("game", "kills", &i));
  CHECK_EQ(i, -5);
  CHECK(!c.ReadInt("game", "missing", &i));
}

TEST(counter_categories_and_lists_are_sorted) {
  CounterStore c;
  c.Increase("os", "load1", 1);
  c.Increase("event/performance/queue", "waiting", 1);
  c.Increase("engine", "sessions", 1);
  c.Increase("engine", "concurrent_user", 1);
  c.Increase("engine", "a/b/c", 1);
  CHECK_EQ(c.Categories(), (std::vector<std::string>{"engine", "event/performance/queue", "os"}));
  std::vector<std::string> names;
  REQUIRE(c.List("engine", &names));
  CHECK_EQ(names, (std::vector<std::string>{"a/b/c", "concurrent_user", "sessions"}));
  CHECK(!c.List("missing", &names));
  int64_t v = 0;
  REQUIRE(c.ReadInt("engine", "a/b/c", &v));
  CHECK_EQ(v, 1);
}

TEST(counter_remove_drops_empty_categories) {
  CounterStore c;
  c.Increase("x", "a", 1);
  c.Increase("x", "b", 1);
  CHECK(c.Remove("x", "a"));
  CHECK(!c.Remove("x", "a"));
  CHECK_EQ(c.Categories(), (std::vector<std::string>{"x"}));
  CHECK(c.Remove("x", "b"));
  CHECK_EQ(c.Categories().size(), 0u);
  std::vector<std::string> names;
  CHECK(!c.List("x", &names));
  CHECK(!c.Remove("nope", "a"));
}

TEST(counter_concurrent_increases_sum_exactly) {
  CounterStore c;
  c.Update("d", "half", 0, true);
  constexpr int kThreads = 8, kPerThread = 50000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&c, t] {
      std::string own = "own" + std::to_string(t % 2);
      for (int i = 0; i < kPerThread; ++i) {
        c.Increase("hot", "shared", 1);  // created by whichever thread comes first
        c.Increase("d", "half", 0.5);
        c.Increase("hot", own, 2);
        if (i % 1000 == 0) c.Categories();
      }
    });
  }
  for (auto& th : threads) th.join();
  int64_t v = 0;
  REQUIRE(c.ReadInt("hot", "shared", &v));
  CHECK_EQ(v, static_cast<int64_t>(kThreads) * kPerThread);
  REQUIRE(c.ReadInt("hot", "own0", &v));
  CHECK_EQ(v, static_cast<int64_t>(kThreads / 2) * kPerThread * 2);
  CounterValue d;
  REQUIRE(c.Get("d", "half", &d));
  CHECK_EQ(d.value, kThreads * kPerThread * 0.5);
}

TEST(counter_layout_generation_moves_only_when_categories_change) {
  CounterStore c;
  uint32_t g0 = c.LayoutGeneration();
  c.Update("a", "x", 1, false);
  uint32_t g1 = c.LayoutGeneration();
  CHECK(g1 != g0);
  c.Update("a", "y", 2, false);  // a new counter in a known category
  c.Increase("a", "x", 5);
  CHECK_EQ(c.LayoutGeneration(), g1);
  c.Increase("a/b", "z", 1);  // a new category
  uint32_t g2 = c.LayoutGeneration();
  CHECK(g2 != g1);
  CHECK(c.Remove("a", "x"));  // "a" still has "y"
  CHECK_EQ(c.LayoutGeneration(), g2);
  CHECK(c.Remove("a", "y"));  // "a" disappears
  CHECK(c.LayoutGeneration() != g2);
  double v = 0;
  CHECK(c.Value("a/b", "z", &v));
  CHECK_EQ(v, 1.0);
  CHECK(!c.Value("a", "y", &v));
  CHECK_EQ(c.LayoutGenerationAddress()->load(), c.LayoutGeneration());
}

TEST(counter_handles_read_without_names_and_survive_removal) {
  CounterStore c;
  CHECK_EQ(c.Handle("a", "x"), int64_t{-1});
  c.Update("a", "x", 3, false);
  c.Update("b", "y", 0.5, true);
  int64_t hx = c.Handle("a", "x");
  int64_t hy = c.Handle("b", "y");
  CHECK(hx >= 0 && hy >= 0 && hx != hy);
  double v = 0;
  REQUIRE(c.ValueAt(hx, &v));
  CHECK_EQ(v, 3.0);
  c.Increase("a", "x", 4);
  REQUIRE(c.ValueAt(hx, &v));
  CHECK_EQ(v, 7.0);
  REQUIRE(c.ValueAt(hy, &v));
  CHECK_EQ(v, 0.5);
  CHECK(c.Remove("a", "x"));
  CHECK(!c.ValueAt(hx, &v));  // removed: absent, and the id does not dangle
  c.Update("a", "x", 9, false);
  int64_t again = c.Handle("a", "x");
  CHECK(again != hx);
  CHECK(!c.ValueAt(hx, &v));
  REQUIRE(c.ValueAt(again, &v));
  CHECK_EQ(v, 9.0);
  CHECK(!c.ValueAt(-1, &v));
  CHECK(!c.ValueAt(1000, &v));
}

}  // namespace counter_store_test
