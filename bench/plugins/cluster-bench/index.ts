/** The handler bench/cluster measures: `relay {to}` sends `relayed` to session `to`, wherever it is. */
import { definePlugin } from '../../../src/index.ts';

export default definePlugin({
  name: 'bench-cluster',
  version: '0.0.1',
  register(api) {
    api.sessions.onMessage('whoami', (_body, msg) => msg.reply({ id: msg.sessionId }));
    api.sessions.onMessage<{ to: number }>('relay', (body) => api.sessions.send(body.to, 'relayed', 1));
  },
});
