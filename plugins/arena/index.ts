/**
 * Example game "arena": log in, chat in rooms, race to click a shared counter, watch the
 * leaderboard. Players, their characters, scores and inventories are game objects
 * (`objects/arena.json`), so a restart keeps every score.
 *
 * Client messages (envelope `{type, body, id?}`; every request gets a reply of the same type):
 * - `hello {name}`       authenticates (test platform), logs the account in (a second login of
 *                        the same name replaces the first session, which is closed with 4009) and
 *                        joins room `lobby`; reply `{name, room: "lobby"}` (the names `.` and `..`
 *                        are refused: the console addresses accounts in URL paths; so are names
 *                        with NUL or an unpaired surrogate). A second hello on one session as
 *                        another name leaves the first player; `{error}` when the account is
 *                        logged in elsewhere under account_login_policy 'refuse'
 * - `join {room}`        joins another room too; reply `{room}`
 * - `leave {room}`       leaves a room; reply `{room}`
 * - `say {room, text}`   publishes `chat {room, from, text}` to everyone in the room
 * - `click`              +1 to the player's score and to the shared total; reply `{score, total}`;
 *                        every 10 clicks the character levels up, every 25 a potion joins the
 *                        inventory
 * - `top`                reply `{leaders: [{name, score}], total}` (top 5)
 * - `profile`            reply `{name, score, character: {nickname, level}, inventory}`
 * Server pushes: `joined {room, name}`, `chat`, `leaderboard {leaders, total}` (a timer, every
 * 5 s after clicks), `notice {category, color, messages}` (the operations console),
 * `_maintenance` / `_maintenance_end` from the engine.
 *
 * The daily mission: 100 clicks in a UTC day earn a medal. A banned account's hello is refused
 * (`{error}`) until it is reinstated. During the `double_clicks` campaign a click counts twice.
 * The operations console (`console.ts`, and the C plugin `arena-console-native`) administers it
 * all: accounts are login names.
 *
 * A player's score, character and inventory are objects, changed by that player's events only
 * (a session's messages run in order on its tag, so `click` replies carry increasing scores and
 * never conflict). The leaderboard and the total are a live view in counters (process-wide),
 * rebuilt at start from the roster of players (a reload keeps them); rooms are session groups and logins are the
 * account manager's.
 */
import { definePlugin, authenticationRequest, makeTestAuthenticationKey, type GameObject, type NoticeMessage } from 'gsf';
import { registerConsole } from './console.ts';
import { CAMPAIGN, DAILY, dayOf } from './rules.ts';

const LOBBY = 'lobby';
/** The id of the one ArenaRoster object: every player's name, in order of first hello. */
const ROSTER = 'roster';
const LEVEL_EVERY = 10;
const POTION_EVERY = 25;

/** The first `units` UTF-16 code units of `s`, never half a surrogate pair (as arena-native cuts). */
function cut(s: string, units: number): string {
  const head = s.slice(0, units);
  const last = head.charCodeAt(head.length - 1);
  return head.length === units && last >= 0xd800 && last <= 0xdbff ? head.slice(0, -1) : head;
}

/** Text a store keeps as a key and every client can read: no NUL, no unpaired surrogate. */
function storable(s: string): boolean {
  return !/\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

interface Leader {
  name: string;
  score: number;
}

export default definePlugin({
  name: 'arena',
  version: '1.0.0',
  register(api) {
    api.counters.define('arena', 'total_clicks', 'Clicks by every player');
    api.counters.define('arena', 'players_seen', 'Players that said hello');
    api.counters.define('arena', 'announced_total', 'Total clicks in the last leaderboard push');
    api.counters.define('arena', CAMPAIGN, 'Whether the double_clicks campaign runs (1) or not (0)');

    const leaders = (): Leader[] => api.counters.list('arena_scores')
      .map((name) => ({ name, score: api.counters.readInt('arena_scores', name) ?? 0 }))
      .sort((x, y) => y.score - x.score || x.name.localeCompare(y.name)).slice(0, 5);
    const roomName = (body: { room?: unknown } | undefined): string => cut(String(body?.room ?? '').trim(), 32) || LOBBY;
    const player = async (sessionId: number): Promise<string> => {
      const name = await api.accounts.accountOf(sessionId);
      if (name === null) throw new Error('say hello first');
      return name;
    };

    api.sessions.onMessage<{ name: string }>('hello', async (body, msg, ctx) => {
      const name = typeof body?.name === 'string' ? cut(body.name.trim(), 24) : '';
      if (name === '') throw new TypeError('hello needs {name: non-empty string}');
      // The name is the account id, and the console addresses accounts in URL paths, which fold '.' and '..'.
      if (name === '.' || name === '..') throw new TypeError(`hello: the name '${name}' is not allowed`);
      // Stored as a unique key and sent to every client: text with a UTF-8 form and no NUL.
      if (!storable(name)) throw new TypeError('hello: a name must not hold NUL or an unpaired UTF-16 surrogate');
      const auth = await api.auth.authenticateAsync(authenticationRequest('test', name, makeTestAuthenticationKey()));
      if (!auth.success) {
        msg.reply({ error: auth.reason_description });
        return;
      }
      // Read for write: a ban committed meanwhile makes this event run again and see it.
      let me = await api.objects.fetchBy('ArenaPlayer', 'name', name, 'write');
      if (me?.get('banned')) {
        msg.reply({ error: `account '${name}' is banned` });
        return;
      }
      // The player this session said hello as before, if another: no longer on it.
      const previous = await api.accounts.accountOf(msg.sessionId);
      if (previous !== null && previous !== name) {
        const old = await api.objects.fetchBy('ArenaPlayer', 'name', previous, 'write');
        if (old !== null && old.get('session') === msg.sessionId) old.set('session', 0);
      }
      const login = await ctx.io(api.accounts.login(name));
      // The socket went meanwhile (its closed event comes next and finds nothing to undo), or the
      // account is held elsewhere (account_login_policy "refuse").
      if (!login.ok) {
        if (login.reason !== 'no_session') msg.reply({ error: `account '${name}' is logged in elsewhere` });
        return;
      }
      if (me === null) {
        // First hello: the player, a character named after them, and a place on the roster.
        me = api.objects.create('ArenaPlayer', { name, joined: new Date() });
        const character = api.objects.create('ArenaCharacter', { nickname: name, player: me.id });
        me.set('character', character.id);
        const roster = await api.objects.fetch('ArenaRoster', ROSTER, 'write') ?? api.objects.create('ArenaRoster', {}, { id: ROSTER });
        roster.set('names', [...roster.get('names'), name]);
      }
      me.set('session', msg.sessionId);
      api.counters.update('arena_scores', name, me.get('score'));
      api.counters.increase('arena', 'players_seen');
      api.sessions.join(msg.sessionId, LOBBY);
      api.sessions.publish(LOBBY, 'joined', { room: LOBBY, name });
      msg.reply({ name, room: LOBBY });
    });

    api.sessions.onMessage<{ room: string }>('join', async (body, msg) => {
      const name = await player(msg.sessionId);
      const room = roomName(body);
      api.sessions.join(msg.sessionId, room);
      api.sessions.publish(room, 'joined', { room, name });
      msg.reply({ room });
    });

    api.sessions.onMessage<{ room: string }>('leave', (body, msg) => {
      const room = roomName(body);
      api.sessions.leave(msg.sessionId, room);
      msg.reply({ room });
    });

    api.sessions.onMessage<{ room: string; text: string }>('say', async (body, msg) => {
      const name = await player(msg.sessionId);
      const room = roomName(body);
      api.sessions.publish(room, 'chat', { room, from: name, text: cut(String(body?.text ?? ''), 500) });
      msg.reply({ room });
    });

    const playerObject = async (name: string): Promise<GameObject<'ArenaPlayer'>> => {
      const me = await api.objects.fetchBy('ArenaPlayer', 'name', name, 'write');
      if (me === null) throw new Error(`no player '${name}'`);
      return me;
    };

    api.sessions.onMessage('click', async (_body, msg) => {
      const name = await player(msg.sessionId);
      const me = await playerObject(name);
      const points = api.counters.readInt('arena', CAMPAIGN) === 1 ? 2 : 1;
      const score = me.get('score') + points;
      me.set('score', score);
      if (Math.floor(score / LEVEL_EVERY) > Math.floor((score - points) / LEVEL_EVERY) && me.get('character') !== null) {
        const character = await api.objects.fetch('ArenaCharacter', me.get('character')!, 'write');
        character?.set('level', 1 + Math.floor(score / LEVEL_EVERY));
      }
      const inventory = { ...me.get('inventory') };
      if (Math.floor(score / POTION_EVERY) > Math.floor((score - points) / POTION_EVERY)) inventory.potion = (inventory.potion ?? 0) + 1;
      const today = dayOf(new Date());
      const clicks = (me.get('clicks_by_day')[today] ?? 0) + 1;
      me.set('clicks_by_day', { ...me.get('clicks_by_day'), [today]: clicks });
      if (clicks === DAILY.goal) inventory[DAILY.reward] = (inventory[DAILY.reward] ?? 0) + 1;
      me.set('inventory', inventory);
      api.counters.update('arena_scores', name, score);
      const total = api.counters.increase('arena', 'total_clicks', points);
      api.invoke('arena.scored', { name, score }); // a child event on the session tag, named `click_#1`
      msg.reply({ score, total });
    });

    api.event<{ name: string; score: number }>('arena.scored', (p) => {
      if (p.score % 100 === 0) api.sessions.broadcast('all', 'chat', { room: '*', from: 'arena', text: `${p.name} reached ${p.score}!` });
    });

    api.sessions.onMessage('top', (_body, msg) => msg.reply({ leaders: leaders(), total: api.counters.readInt('arena', 'total_clicks') ?? 0 }));

    api.sessions.onMessage('profile', async (_body, msg) => {
      const me = await api.objects.fetchBy('ArenaPlayer', 'name', await player(msg.sessionId));
      if (me === null) throw new Error('say hello first');
      const id = me.get('character');
      const character = id === null ? null : await api.objects.fetch('ArenaCharacter', id);
      msg.reply({
        name: me.get('name'), score: me.get('score'),
        character: character && { nickname: character.get('nickname'), level: character.get('level') },
        inventory: me.get('inventory'),
      });
    });

    // The live leaderboard and total come back from the stored players, at start and again
    // after a reload switched to this version. A player's stored session becomes where the
    // account is logged in now (after a restart nowhere, after a reload where it was). The
    // counters are set from the stored scores only while the total reads 0 (a new process): a
    // reload keeps them, and setting them from what this transaction read while players click
    // would lose or repeat clicks.
    api.onStart(async () => {
      const counters = (api.counters.readInt('arena', 'total_clicks') ?? 0) === 0;
      const scores = await api.objects.transact(async (tx) => {
        const roster = await tx.fetch('ArenaRoster', ROSTER);
        const out: Leader[] = [];
        for (const name of roster?.get('names') ?? []) {
          const p = await tx.fetchBy('ArenaPlayer', 'name', name);
          if (!p) continue;
          out.push({ name, score: p.get('score') });
          const live = (await api.accounts.locate(name)) ?? 0;
          if (p.get('session') !== live) (await tx.fetchBy('ArenaPlayer', 'name', name, 'write'))!.set('session', live);
        }
        return roster === null ? null : out;
      });
      if (scores !== null && !counters) return;
      let total = 0;
      for (const { name, score } of scores ?? []) {
        api.counters.update('arena_scores', name, score);
        total += score;
      }
      api.counters.update('arena', 'total_clicks', total);
      api.counters.update('arena', 'announced_total', total);
    });

    api.sessions.onClose(async (info) => {
      if (info.account === null) return;
      api.log.vlog(1, `arena: ${info.account} left (${info.code} ${info.reason})`);
      const me = await api.objects.fetchBy('ArenaPlayer', 'name', info.account, 'write');
      if (me !== null && me.get('session') === info.sessionId) me.set('session', 0);
    });

    // Asked by the console (either half): close a player's session, push a notice.
    api.event<{ name: string; reason: string }>('arena.kick', async (p) => {
      const sessionId = await api.accounts.locate(p.name);
      if (sessionId !== null) api.sessions.close(sessionId, p.reason);
    });
    api.event<{ category: string; color: string; messages: NoticeMessage[] }>('arena.notice', (p) => {
      if (p.category === 'all') api.sessions.broadcast('all', 'notice', p);
      else api.sessions.publish(p.category, 'notice', p);
    });
    registerConsole(api);

    // Timers share one tag, so this handler never runs twice at once; the last total it
    // announced is kept in a counter because the next firing may run on another thread.
    api.event('arena.leaderboard', () => {
      const total = api.counters.readInt('arena', 'total_clicks') ?? 0;
      if (total === (api.counters.readInt('arena', 'announced_total') ?? 0)) return;
      api.counters.update('arena', 'announced_total', total);
      api.sessions.broadcast('all', 'leaderboard', { leaders: leaders(), total });
    });
    api.timers.every(5000, 'arena.leaderboard');
  },
});
