/**
 * Example game "arena": log in, chat in rooms, race to click a shared counter, watch the
 * leaderboard.
 *
 * Client messages (envelope `{type, body, id?}`; every request gets a reply of the same type):
 * - `hello {name}`       authenticates (test platform), logs the account in (a second login of
 *                        the same name replaces the first session, which is closed with 4009) and
 *                        joins room `lobby`; reply `{name, room: "lobby"}`
 * - `join {room}`        joins another room too; reply `{room}`
 * - `leave {room}`       leaves a room; reply `{room}`
 * - `say {room, text}`   publishes `chat {room, from, text}` to everyone in the room
 * - `click`              +1 to the player's score and to the shared total; reply `{score, total}`
 * - `top`                reply `{leaders: [{name, score}], total}` (top 5)
 * Server pushes: `joined {room, name}`, `chat`, `leaderboard {leaders, total}` (a timer, every
 * 5 s after clicks), `_maintenance` / `_maintenance_end` from the engine.
 *
 * Event threads share no memory: scores and the total live in counters (process-wide), rooms
 * are session groups and logins are the account manager's. A session's messages run in order
 * on its tag, so one player's `click` replies carry increasing scores.
 */
import { definePlugin, authenticationRequest, makeTestAuthenticationKey } from 'gsf';

const LOBBY = 'lobby';

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

    const leaders = (): Leader[] => api.counters.list('arena_scores')
      .map((name) => ({ name, score: api.counters.readInt('arena_scores', name) ?? 0 }))
      .sort((x, y) => y.score - x.score || x.name.localeCompare(y.name)).slice(0, 5);
    const roomName = (body: { room?: unknown } | undefined): string => String(body?.room ?? '').trim().slice(0, 32) || LOBBY;
    const player = async (sessionId: number): Promise<string> => {
      const name = await api.accounts.accountOf(sessionId);
      if (name === null) throw new Error('say hello first');
      return name;
    };

    api.sessions.onMessage<{ name: string }>('hello', async (body, msg, ctx) => {
      const name = typeof body?.name === 'string' ? body.name.trim().slice(0, 24) : '';
      if (name === '') throw new TypeError('hello needs {name: non-empty string}');
      const auth = await api.auth.authenticateAsync(authenticationRequest('test', name, makeTestAuthenticationKey()));
      if (!auth.success) {
        msg.reply({ error: auth.reason_description });
        return;
      }
      await ctx.io(api.accounts.login(name));
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
      api.sessions.publish(room, 'chat', { room, from: name, text: String(body?.text ?? '').slice(0, 500) });
      msg.reply({ room });
    });

    api.sessions.onMessage('click', async (_body, msg) => {
      const name = await player(msg.sessionId);
      const score = api.counters.increase('arena_scores', name, 1);
      const total = api.counters.increase('arena', 'total_clicks', 1);
      api.invoke('arena.scored', { name, score }); // a child event on the session tag, named `click_#1`
      msg.reply({ score, total });
    });

    api.event<{ name: string; score: number }>('arena.scored', (p) => {
      if (p.score % 100 === 0) api.sessions.broadcast('all', 'chat', { room: '*', from: 'arena', text: `${p.name} reached ${p.score}!` });
    });

    api.sessions.onMessage('top', (_body, msg) => msg.reply({ leaders: leaders(), total: api.counters.readInt('arena', 'total_clicks') ?? 0 }));

    api.sessions.onClose((info) => {
      if (info.account !== null) api.log.vlog(1, `arena: ${info.account} left (${info.code} ${info.reason})`);
    });

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
