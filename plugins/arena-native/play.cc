// arena-native: click, top and profile, and the leaderboard they share.
#include <algorithm>
#include <array>
#include <cctype>

#include "arena.h"

namespace arena {
namespace {

struct Leader {
  std::string name;
  int64_t score;
};

/**
 * String.prototype.localeCompare for the names players pick, as ICU's root collation orders
 * ASCII: by rank over the whole name first (a shorter prefix first), then lower case before
 * upper. Control characters other than the white-space ones weigh nothing there: skipped.
 */
bool NameBefore(const std::string& a, const std::string& b) {
  // ICU's root order of ASCII: the white-space controls (tab, line feed, vertical tab, form
  // feed, carriage return), space, punctuation, symbols, digits, letters (a letter and its
  // capital share a rank); other controls are ignored (-1). Other bytes come after, in byte order.
  static const std::array<int, 256> rank = [] {
    std::array<int, 256> r{};
    std::string_view order = "\t\n\v\f\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789";
    for (int c = 0; c < 256; c++) r[c] = c < 0x20 || c == 0x7f ? -1 : 1000 + c;
    int next = 0;
    for (char c : order) r[static_cast<unsigned char>(c)] = next++;
    for (int c = 'a'; c <= 'z'; c++) r[c] = r[c - 'a' + 'A'] = next++;
    return r;
  }();
  auto weighs = [](const std::string& s, size_t& i) {
    while (i < s.size() && rank[static_cast<unsigned char>(s[i])] < 0) i++;
    return i < s.size();
  };
  size_t i = 0, j = 0;
  for (;; i++, j++) {
    bool more_a = weighs(a, i), more_b = weighs(b, j);
    if (!more_a || !more_b) {
      if (more_a != more_b) return more_b;  // a prefix first
      break;
    }
    int x = rank[static_cast<unsigned char>(a[i])], y = rank[static_cast<unsigned char>(b[j])];
    if (x != y) return x < y;
  }
  // Equal but for case: lower case first, at the first difference.
  for (i = 0, j = 0; weighs(a, i) && weighs(b, j); i++, j++) {
    if (a[i] != b[j]) return std::islower(static_cast<unsigned char>(a[i])) != 0;
  }
  return false;
}

/** click: +1 (2 during the campaign) to the score and the total; levels, potions, the daily medal. */
void Click(Event& ev) {
  WithPlayer(ev, [](Call& c, const std::string& name) {
    c.fetch_by(kPlayer, "name", name, Mode::write, [name](Call& c2, const Object* me) {
      if (!me) throw Error(GSF_STATUS_NOT_FOUND, "no player '" + name + "'");
      Reader fields = me->fields();
      int64_t points = host::counter_read("arena", kCampaign).value_or(0) == 1 ? 2 : 1;
      int64_t score = fields.integer("score").value_or(0) + points;
      Counts inventory = ReadCounts(fields.find("inventory"));
      if (score / kPotionEvery > (score - points) / kPotionEvery) CountOf(inventory, "potion") += 1;
      Counts days = ReadCounts(fields.find("clicks_by_day"));
      int64_t clicks = ++CountOf(days, Today());
      if (clicks == kDailyGoal) CountOf(inventory, kDailyReward) += 1;
      Writer set;
      set.map(3).field("score").integer(score).field("clicks_by_day");
      WriteCounts(set, days);
      set.field("inventory");
      WriteCounts(set, inventory);
      c2.set(kPlayer, me->id, set);
      host::counter_update("arena_scores", name, static_cast<double>(score));
      auto total = static_cast<int64_t>(host::counter_increase("arena", "total_clicks", static_cast<double>(points)));
      Writer scored;
      scored.map(2).field("name").string(name).field("score").integer(score);
      c2.invoke("arena.scored", &scored);  // a child event on the session's tag
      c2.reply(Writer().map(2).field("score").integer(score).field("total").integer(total));
      // A level every 10 points: the character changes in the same event (committed together).
      auto character = fields.find("character");
      auto character_id = character ? Reader(*character).string() : std::nullopt;
      if (score / kLevelEvery > (score - points) / kLevelEvery && character_id) {
        c2.fetch(kCharacter, *character_id, Mode::write, [score](Call& c3, const Object* ch) {
          if (ch) c3.set(kCharacter, ch->id, Writer().map(1).field("level").integer(1 + score / kLevelEvery));
        });
      }
    });
  });
}

void Profile(Event& ev) {
  WithPlayer(ev, [](Call& c, const std::string& name) {
    c.fetch_by(kPlayer, "name", name, Mode::read, [](Call& c2, const Object* me) {
      if (!me) throw Error(GSF_STATUS_UNAUTHENTICATED, "say hello first");
      Reader fields = me->fields();
      // What the reply needs of the player, copied: the continuation below outlives this view.
      std::string player(fields.string("name").value_or(""));
      int64_t score = fields.integer("score").value_or(0);
      Counts inventory = ReadCounts(fields.find("inventory"));
      auto answer = [player, score, inventory](Call& c3, const Object* ch) {
        Writer w;
        w.map(4).field("name").string(player).field("score").integer(score).field("character");
        if (ch) {
          Reader f = ch->fields();
          w.map(2).field("nickname").string(f.string("nickname").value_or("")).field("level").integer(f.integer("level").value_or(1));
        } else {
          w.nil();
        }
        w.field("inventory");
        WriteCounts(w, inventory);
        c3.reply(w);
      };
      auto character = fields.find("character");
      auto character_id = character ? Reader(*character).string() : std::nullopt;
      if (!character_id) return answer(c2, nullptr);
      c2.fetch(kCharacter, *character_id, Mode::read, answer);
    });
  });
}

}  // namespace

void WriteLeaders(Writer& w, const Object* roster) {
  std::vector<Leader> leaders;
  auto names = roster ? roster->field("names") : std::nullopt;
  if (names) {
    Reader r = *names;
    uint32_t n = r.array().value_or(0);
    for (uint32_t i = 0; i < n; i++) {
      auto name = r.string();
      if (!name) break;
      // A player this server has a live score for (as the TypeScript game lists its counters).
      if (auto score = host::counter_read("arena_scores", *name)) leaders.push_back({std::string(*name), static_cast<int64_t>(*score)});
    }
  }
  std::sort(leaders.begin(), leaders.end(),
            [](const Leader& x, const Leader& y) { return x.score != y.score ? x.score > y.score : NameBefore(x.name, y.name); });
  if (leaders.size() > 5) leaders.resize(5);
  w.array(static_cast<uint32_t>(leaders.size()));
  for (const Leader& l : leaders) w.map(2).field("name").string(l.name).field("score").integer(l.score);
}

void RegisterPlay(Registrar& r) {
  r.on_message("click", &Click);
  r.on_event("arena.scored", [](Event& ev) {
    Reader p = ev.payload();
    int64_t score = p.integer("score").value_or(0);
    if (score % 100 != 0) return;
    std::string text = std::string(p.string("name").value_or("")) + " reached " + std::to_string(score) + "!";
    ev.broadcast("chat", Writer().map(3).field("room").string("*").field("from").string("arena").field("text").string(text));
  });
  r.on_message("top", [](Event& ev) {
    ev.fetch(kRosterType, kRoster, Mode::read, [](Call& c, const Object* roster) {
      Writer w;
      w.map(2).field("leaders");
      WriteLeaders(w, roster);
      w.field("total").integer(static_cast<int64_t>(host::counter_read("arena", "total_clicks").value_or(0)));
      c.reply(w);
    });
  });
  r.on_message("profile", &Profile);
}

}  // namespace arena
