// arena-native: the example game "arena" in C++, against gsf_plugin.hpp (ABI 1.2). It plays the
// client protocol of plugins/arena (index.ts) over the same object types (objects/arena.json),
// counters and events, so the same clients, tests and console (plugins/arena-console-native)
// work with either. Load one of the two: both register the same message types.
//
// The parts: arena.cc (init, the lifecycle, hello and rooms), play.cc (click, top, profile, the
// leaderboard), admin.cc (what the console asks for, restoring the live view at start, sessions
// that close), text.cc (names, rooms, days as the TypeScript game cuts and formats them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gsf_plugin.hpp"

namespace arena {

using namespace gsf::plugin;

inline constexpr std::string_view kLobby = "lobby";
/** The id of the one ArenaRoster object: every player's name, in order of first hello. */
inline constexpr std::string_view kRoster = "roster";
inline constexpr std::string_view kPlayer = "ArenaPlayer";
inline constexpr std::string_view kCharacter = "ArenaCharacter";
inline constexpr std::string_view kRosterType = "ArenaRoster";
inline constexpr std::string_view kCampaign = "double_clicks";
inline constexpr int64_t kLevelEvery = 10;
inline constexpr int64_t kPotionEvery = 25;
/** The daily mission (rules.ts DAILY): 100 clicks in a UTC day earn a medal. */
inline constexpr int64_t kDailyGoal = 100;
inline constexpr std::string_view kDailyReward = "medal";

/* ---- text.cc ---- */

/** JavaScript's String.prototype.trim (ECMAScript white space and line terminators). */
std::string_view Trim(std::string_view s);
/** The first `units` UTF-16 code units of UTF-8 text, as JavaScript's slice(0, units) (never half a pair). */
std::string_view Prefix(std::string_view s, size_t units);
/** JavaScript's String(value) of a number (Number::toString: `1.5`, `1e+21`, `1e-7`). */
std::string JsNumber(double v);
/** JavaScript's String(value ?? '') of a body field as msgpackr decodes it (maps are '[object Object]'). */
std::string JsString(Reader value, int depth = 0);
/** Whether text may be a name: valid UTF-8 (so no unpaired surrogate) and no NUL. */
bool Storable(std::string_view s);
/** A room from a body's `room`: String(room ?? '').trim().slice(0, 32), or the lobby when that is empty. */
std::string RoomName(const Reader& body);
/** Today's UTC date, YYYY-MM-DD. */
std::string Today();
/** Milliseconds since the Unix epoch. */
int64_t NowMs();
/** A random UUID (version 4), an object id. */
std::string NewId();

/* ---- maps of integers (inventory, clicks_by_day), in the order JavaScript keeps their keys ---- */

using Counts = std::vector<std::pair<std::string, int64_t>>;
/** A map field of integers (absent or nil: empty). */
Counts ReadCounts(std::optional<Reader> field);
void WriteCounts(Writer& w, const Counts& counts);
/** The count of `key`, appended at 0 if missing (insertion order, as a JavaScript object keeps non-numeric keys). */
int64_t& CountOf(Counts& counts, std::string_view key);

/* ---- the leaderboard (play.cc) ---- */

/** Writes `leaders` (the top 5 of the roster's scores, from the arena_scores counters). */
void WriteLeaders(Writer& w, const Object* roster);

/* ---- registration, per part ---- */

void RegisterPlay(Registrar& r);
void RegisterAdmin(Registrar& r);
/** The live leaderboard and total from the stored players: a transaction run at start (admin.cc). */
void Restore(Event& tx);

/**
 * Runs then(Call&, std::string name) with the account the event's session is logged in as;
 * fails the event ("say hello first") when it is logged in as nobody.
 */
template <typename F>
void WithPlayer(const Event& ev, F&& then) {
  ev.account_of(ev.session(), [then = std::forward<F>(then)](Call& c, const AccountResult& a) {
    if (a.account().empty()) throw Error(GSF_STATUS_UNAUTHENTICATED, "say hello first");
    return then(c, std::string(a.account()));
  });
}

}  // namespace arena
