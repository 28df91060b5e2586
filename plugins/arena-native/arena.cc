// arena-native: init, the lifecycle, hello and the rooms (join, leave, say). The protocol is
// plugins/arena/index.ts's; see arena.h.
#include "arena.h"

namespace arena {
namespace {

/** hello's name: a non-empty string, trimmed and cut to 24 UTF-16 code units. */
std::string HelloName(const Reader& body) {
  auto name = body.type() == GSF_MP_MAP ? body.string("name") : std::nullopt;
  std::string_view cut = name ? Prefix(Trim(*name), 24) : std::string_view();
  if (cut.empty()) throw Error(GSF_STATUS_INVALID_ARGUMENT, "hello needs {name: non-empty string}");
  // The name is the account id, and the console addresses accounts in URL paths, which fold '.' and '..'.
  if (cut == "." || cut == "..") throw Error(GSF_STATUS_INVALID_ARGUMENT, "hello: the name '" + std::string(cut) + "' is not allowed");
  // Stored as a unique key and sent to every client: text with a UTF-8 form and no NUL.
  if (!Storable(cut)) throw Error(GSF_STATUS_INVALID_ARGUMENT, "hello: a name must not hold NUL or an unpaired UTF-16 surrogate");
  return std::string(cut);
}

/** What every hello ends with: the live score, the lobby, the reply. */
void Welcome(Call& c, const std::string& name, int64_t score, uint64_t session) {
  host::counter_update("arena_scores", name, static_cast<double>(score));
  host::counter_increase("arena", "players_seen");
  c.join(session, kLobby);
  c.publish(kLobby, "joined", Writer().map(2).field("room").string(kLobby).field("name").string(name));
  c.reply(Writer().map(2).field("name").string(name).field("room").string(kLobby));
}

/**
 * A first hello: the player, a character named after them, and a place on the roster, created
 * in this event (committed with it). The two ids are chosen here, so each object names the
 * other from the start.
 */
void FirstHello(Call& c, const std::string& name, uint64_t session) {
  std::string player = NewId(), character = NewId();
  c.create(kPlayer, Writer().map(4).field("name").string(name).field("joined").timestamp(NowMs()).field("character").string(character)
                        .field("session").integer(static_cast<int64_t>(session)), player);
  c.create(kCharacter, Writer().map(2).field("nickname").string(name).field("player").string(player), character);
  c.fetch(kRosterType, kRoster, Mode::write, [name](Call& c2, const Object* roster) {
    std::vector<std::string> names;
    if (auto list = roster ? roster->field("names") : std::nullopt) {
      Reader r = *list;
      uint32_t n = r.array().value_or(0);
      for (uint32_t i = 0; i < n; i++) names.emplace_back(r.string().value_or(""));
    }
    names.push_back(name);
    Writer w;
    w.map(1).field("names").array(static_cast<uint32_t>(names.size()));
    for (const std::string& n : names) w.string(n);
    if (roster) {
      c2.set(kRosterType, kRoster, w);
    } else {
      c2.create(kRosterType, w, kRoster);
    }
  });
  Welcome(c, name, 0, session);
}

/** The player `session` said hello as before, if not `name`: no longer on it. */
void LeavePrevious(Call& c, const std::string& name, uint64_t session, std::string_view previous) {
  if (previous.empty() || previous == name) return;
  c.fetch_by(kPlayer, "name", std::string(previous), Mode::write, [session](Call& c2, const Object* old) {
    if (old && old->fields().integer("session").value_or(0) == static_cast<int64_t>(session)) {
      c2.set(kPlayer, std::string(old->id), Writer().map(1).field("session").integer(0));
    }
  });
}

/** A player now logged in on `session`: a new one is created, a known one takes the session. */
void LoggedIn(Call& c3, const std::string& name, uint64_t session, const std::string& id, int64_t score) {
  if (id.empty()) return FirstHello(c3, name, session);
  c3.set(kPlayer, id, Writer().map(1).field("session").integer(static_cast<int64_t>(session)));
  Welcome(c3, name, score, session);
}

/** hello after authentication: a banned player is refused; the rest log in (replacing an older session). */
void Enter(Call& c, const std::string& name, uint64_t session) {
  // Read for write: a ban committed meanwhile makes this event run again and see it.
  c.fetch_by(kPlayer, "name", name, Mode::write, [name, session](Call& c2, const Object* me) {
    if (me && me->fields().boolean("banned").value_or(false)) {
      c2.reply(Writer().map(1).field("error").string("account '" + name + "' is banned"));
      return;
    }
    std::string id = me ? std::string(me->id) : std::string();
    int64_t score = me ? me->fields().integer("score").value_or(0) : 0;
    c2.account_of(session, [name, session, id, score](Call& c3, const AccountResult& was) {
      LeavePrevious(c3, name, session, was.account());
      c3.login(name, session, [name, session, id, score](Call& c4, const AccountResult& r) {
        // The socket went meanwhile (its closed hook comes next and finds nothing to undo), or the
        // account is held elsewhere (account_login_policy "refuse").
        if (r.login() != GSF_LOGIN_OK) {
          if (r.login() != GSF_LOGIN_NO_SESSION) c4.reply(Writer().map(1).field("error").string("account '" + name + "' is logged in elsewhere"));
          return;
        }
        LoggedIn(c4, name, session, id, score);
      });
    });
  });
}

void Hello(Event& ev) {
  std::string name = HelloName(ev.payload());
  uint64_t session = ev.session();
  // The AuthenticationClient (test platform): a refusal is answered, a system error fails the hello.
  Writer request;
  request.map(3).field("platform_type").string("test").field("user_id").string(name).field("authentication_key").string("");
  ev.authenticate(request, [name, session](Call& c, const Result& auth) {
    if (!auth.ok()) throw Error(auth.status(), std::string(auth.message()));
    Reader answer = auth.value();
    if (!answer.boolean("success").value_or(false)) {
      c.reply(Writer().map(1).field("error").string(answer.string("reason_description").value_or("")));
      return;
    }
    Enter(c, name, session);
  });
}

void Init(Registrar& r) {
  if (HostApi()->abi_minor < 2) throw Error(GSF_STATUS_UNAVAILABLE, "arena-native needs gsf's plugin ABI 1.2 (sessions and accounts)");
  host::counter_define("arena", "total_clicks", "Clicks by every player");
  host::counter_define("arena", "players_seen", "Players that said hello");
  host::counter_define("arena", "announced_total", "Total clicks in the last leaderboard push");
  host::counter_define("arena", kCampaign, "Whether the double_clicks campaign runs (1) or not (0)");

  r.on_message("hello", &Hello);
  r.on_message("join", [](Event& ev) {
    std::string room = RoomName(ev.payload());
    uint64_t session = ev.session();
    WithPlayer(ev, [room, session](Call& c, const std::string& name) {
      c.join(session, room);
      c.publish(room, "joined", Writer().map(2).field("room").string(room).field("name").string(name));
      c.reply(Writer().map(1).field("room").string(room));
    });
  });
  r.on_message("leave", [](Event& ev) {
    std::string room = RoomName(ev.payload());
    ev.leave(ev.session(), room);
    ev.reply(Writer().map(1).field("room").string(room));
  });
  r.on_message("say", [](Event& ev) {
    Reader body = ev.payload();
    std::string room = RoomName(body);
    auto text = body.type() == GSF_MP_MAP ? body.find("text") : std::nullopt;
    std::string line(Prefix(text ? JsString(*text) : std::string(), 500));
    WithPlayer(ev, [room, line](Call& c, const std::string& name) {
      c.publish(room, "chat", Writer().map(3).field("room").string(room).field("from").string(name).field("text").string(line));
      c.reply(Writer().map(1).field("room").string(room));
    });
  });
  RegisterPlay(r);
  RegisterAdmin(r);
}

/** Once the server serves: the live view comes back from the stored players, and the leaderboard push starts. */
void Start(Call& c) {
  c.transact(&Restore);
  // Every 5 s, on the timer tag (so never twice at once); gsf ends it at reload and shutdown.
  c.start_timer(5000, 5000, "arena.leaderboard", [](Event& ev) {
    double total = host::counter_read("arena", "total_clicks").value_or(0);
    if (total == host::counter_read("arena", "announced_total").value_or(0)) return;
    host::counter_update("arena", "announced_total", total);
    ev.fetch(kRosterType, kRoster, Mode::read, [total](Call& c2, const Object* roster) {
      Writer w;
      w.map(2).field("leaders");
      WriteLeaders(w, roster);
      w.field("total").integer(static_cast<int64_t>(total));
      c2.broadcast("leaderboard", w);
    });
  }).detach();
}

}  // namespace
}  // namespace arena

GSF_PLUGIN_CPP_LIFECYCLE("arena-native", "1.0.0", arena::Init, arena::Start, nullptr, nullptr);
