/**
 * Example plugin: a tiny scoreboard kept in counters.
 * - `example.score` adds points; all scores are serialised on one named tag, so no locks.
 * - a timer (`example.tick`, every 5 s) counts ticks and asks for a report;
 * - `example.report` runs as a child event (named `example.tick_#1`) and logs at v >= 1.
 */
import { definePlugin } from 'gsf';

interface Score {
  player: string;
  points: number;
}

export default definePlugin({
  name: 'example',
  version: '1.0.0',
  register(api) {
    const scoreboard = api.tags.named('example.scoreboard');

    api.counters.define('example', 'points_total', 'Points scored by all players');
    api.counters.define('example', 'ticks', 'Timer ticks since start');

    api.event<Score>('example.score', (score, ctx) => {
      ctx.setEventName('example.score');
      if (typeof score?.player !== 'string' || !Number.isInteger(score.points)) {
        throw new TypeError('example.score expects { player: string, points: integer }');
      }
      api.counters.increase('example', 'points_total', score.points);
      api.counters.increase('example/players', score.player, score.points);
    });

    api.event('example.tick', () => {
      api.counters.increase('example', 'ticks');
      api.invoke('example.report');
    });

    api.event('example.report', (_payload, ctx) => {
      api.log.vlog(1, `scoreboard: ${api.counters.readInt('example', 'points_total') ?? 0} points, event ${ctx.name}`);
    });

    api.timers.every(5000, 'example.tick');

    api.onStart(() => {
      for (const player of ['ada', 'grace', 'alan']) {
        api.invoke('example.score', { player, points: 10 }, { tag: scoreboard });
      }
    });
  },
});
