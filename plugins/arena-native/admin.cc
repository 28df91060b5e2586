// arena-native: the game's events for administration (arena.kick, arena.notice: the TypeScript
// game's, which its managed console half invokes; the C half acts on sessions itself), the
// live view restored at start, and sessions that close.
#include <memory>

#include "arena.h"

namespace arena {
namespace {

/** The restore's running sums, shared by its continuations (one event: they never overlap). */
struct RestoreSums {
  size_t pending = 0;
  int64_t total = 0;
};

void Restored(const RestoreSums& st) {
  host::counter_update("arena", "total_clicks", static_cast<double>(st.total));
  host::counter_update("arena", "announced_total", static_cast<double>(st.total));
}

}  // namespace

/**
 * The live view comes back from the stored players at start, and again when a reload switched
 * to this copy (on_start runs then too):
 * - a player's stored session is set to where the account is logged in now, 0 when nowhere:
 *   after a restart no session survived, after a reload every one did;
 * - the score counters and the total are set from the stored scores when the total reads 0 (a
 *   new process). After a reload they survived, and setting them from what this transaction
 *   read while players click would lose or repeat clicks. A fresh store has no roster: the total
 *   starts at 0 (the counters are the process's, and may hold an earlier server's). A rerun (a
 *   conflict) recomputes it all.
 */
void Restore(Event& ev) {
  const bool counters = host::counter_read("arena", "total_clicks").value_or(0) == 0;
  ev.fetch(kRosterType, kRoster, Mode::read, [counters](Call& c, const Object* roster) {
    auto st = std::make_shared<RestoreSums>();
    auto names = roster ? roster->field("names") : std::nullopt;
    if (!names) return Restored(*st);
    Reader r = *names;
    uint32_t n = r.array().value_or(0);
    for (uint32_t i = 0; i < n; i++) {
      auto name = r.string();
      if (!name) break;
      st->pending++;
      c.fetch_by(kPlayer, "name", *name, Mode::read, [st, counters, player = std::string(*name)](Call& c2, const Object* p) {
        if (p) {
          int64_t score = p->fields().integer("score").value_or(0);
          if (counters) host::counter_update("arena_scores", player, static_cast<double>(score));
          st->total += score;
          int64_t stored = p->fields().integer("session").value_or(0);
          c2.locate(player, [player, stored](Call& c3, const AccountResult& a) {
            auto live = static_cast<int64_t>(a.found() ? a.session() : 0);
            if (live == stored) return;
            c3.fetch_by(kPlayer, "name", player, Mode::write, [live](Call& c4, const Object* w) {
              if (w) c4.set(kPlayer, w->id, Writer().map(1).field("session").integer(live));
            });
          });
        }
        if (--st->pending == 0 && counters) Restored(*st);
      });
    }
    if (st->pending == 0 && counters) Restored(*st);
  });
}

void RegisterAdmin(Registrar& r) {
  // A force-logout or ban: close the player's session where it is logged in.
  r.on_event("arena.kick", [](Event& ev) {
    Reader p = ev.payload();
    std::string name(p.string("name").value_or(""));
    std::string reason(p.string("reason").value_or(""));
    if (name.empty()) throw Error(GSF_STATUS_INVALID_ARGUMENT, "arena.kick needs {name, reason}");
    ev.locate(name, [reason](Call& c, const AccountResult& a) {
      if (a.session() != 0) c.close(a.session(), reason);
    });
  });
  // A realtime notice {category, color, messages}: to everyone, or to a room.
  r.on_event("arena.notice", [](Event& ev) {
    auto category = ev.payload().string("category");
    if (!category) throw Error(GSF_STATUS_INVALID_ARGUMENT, "arena.notice needs {category, color, messages}");
    if (*category == "all") {
      ev.broadcast("notice", ev.raw_payload());
    } else {
      ev.publish(*category, "notice", ev.raw_payload());
    }
  });

  r.on_session_closed([](Event& ev, const SessionInfo& s) {
    if (s.account().empty()) return;
    ev.log(-1, "arena: " + std::string(s.account()) + " left (" + std::to_string(s.close_code()) + " " + std::string(s.reason()) + ")");
    uint64_t session = s.id();
    ev.fetch_by(kPlayer, "name", s.account(), Mode::write, [session](Call& c, const Object* me) {
      if (me && me->fields().integer("session").value_or(0) == static_cast<int64_t>(session)) {
        c.set(kPlayer, me->id, Writer().map(1).field("session").integer(0));
      }
    });
  });
}

}  // namespace arena
