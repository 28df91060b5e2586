/**
 * The AuthenticationClient component on the server: says at start where authentication requests
 * go, and stops the main thread's sync helper when the server stops.
 */
import type { Feature } from '../features.ts';
import { closeThreadClient, threadClient } from './plugin-api.ts';

export const authFeature: Feature = {
  name: 'authentication client',
  start({ host }) {
    const client = threadClient(host.flags);
    if (client.options.useAuthenticator) {
      host.log.info(`AuthenticationClient: authenticator agent at ${client.agent}`);
    } else {
      host.log.info('AuthenticationClient: use_authenticator is false: every authentication request succeeds');
    }
    return { stop: () => closeThreadClient() };
  },
};
