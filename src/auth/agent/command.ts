/** `gsf authenticator [--manifest PATH]`: runs the agent until SIGINT or SIGTERM. */
import { describeError } from '../../errors.ts';
import { loadAgentConfig } from './agent-config.ts';
import { startAgent, type RunningAgent } from './agent.ts';

export const DEFAULT_AGENT_MANIFEST = 'authenticator.MANIFEST.json';

export async function runAuthenticator(manifestPath: string): Promise<void> {
  let agent: RunningAgent;
  try {
    agent = await startAgent(loadAgentConfig(manifestPath));
  } catch (err) {
    process.stderr.write(`gsf: ${err instanceof TypeError ? `TypeError: ${err.message}` : describeError(err)}\n`);
    process.exit(1);
  }
  agent.log.info(`listening authenticator=${agent.address}:${agent.port}`);
  let stopping = false;
  // No new connection; the requests in flight are answered (for at most agent.drainMs), then exit 0.
  // A second signal exits at once.
  const stop = async (signal: string): Promise<void> => {
    if (stopping) {
      agent.log.error(`${signal} received again: exiting with ${agent.inFlight()} request(s) unanswered`);
      process.exit(1);
    }
    stopping = true;
    agent.log.info(`${signal} received: stopping`);
    agent.close();
    const deadline = Date.now() + agent.drainMs;
    while (agent.inFlight() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    if (agent.inFlight() > 0) agent.log.warn(`stopping with ${agent.inFlight()} request(s) unanswered after ${agent.drainMs} ms`);
    agent.log.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
