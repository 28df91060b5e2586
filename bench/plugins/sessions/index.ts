/** The handler bench/sessions measures: `echo` replies with the body it got. */
import { definePlugin } from '../../../src/index.ts';

/** The game logic of the benchmark, shared with the `ws` baseline so both run the same code. */
export function echo(body: unknown): unknown {
  return body;
}

export default definePlugin({
  name: 'bench-sessions',
  version: '0.0.1',
  register(api) {
    api.sessions.onMessage('echo', (body, msg) => msg.reply(echo(body)));
  },
});
