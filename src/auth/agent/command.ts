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
  const stop = (signal: string): void => {
    agent.log.info(`${signal} received: stopping`);
    agent.close();
    agent.log.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
