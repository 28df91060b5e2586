/**
 * The AuthenticationClient component on the server: says at start where authentication requests
 * go (the agent's address; at v >= 1 also that there is none), and stops the main thread's sync
 * helper when the server stops.
 */
import type { Feature } from '../../features.ts';
import { closeThreadClient, threadClient } from './plugin-api.ts';

export const authFeature: Feature = {
  name: 'authentication client',
  start({ thread }) {
    const client = threadClient(thread.flags);
    if (client.options.useAuthenticator) {
      thread.log.info(`AuthenticationClient: authenticator agent at ${client.agent}`);
    } else {
      // The local-testing default says so only at v >= 1: most starts use it.
      thread.log.vlog(1, 'AuthenticationClient: use_authenticator is false: every authentication request succeeds');
    }
    return { stop: () => closeThreadClient() };
  },
};
