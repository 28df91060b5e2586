/** What the agent needs from a platform adapter. */
import type { AgentAnswer, SocialPlatform } from '../types.ts';

/** The user's credentials as the game client sent them. */
export interface Credentials {
  token: string;
  /** OAuth 1.0a token secret (microblog). */
  secret?: string;
}

/**
 * A platform adapter. `verify` and `friends` answer result 0 or 1; platform failures throw
 * `PlatformError` (results 3–5).
 */
export interface PlatformAdapter {
  readonly name: SocialPlatform;
  /** Whether the manifest gives the base URL and app credentials. */
  readonly configured: boolean;
  verify(playerId: string, creds: Credentials): Promise<AgentAnswer>;
  /** Friend ids of a player whose token `verify` accepted, every page followed. */
  friends(playerId: string, creds: Credentials): Promise<AgentAnswer>;
}

export const OK: AgentAnswer = Object.freeze({ result: 0, description: '' });

export function failed(description: string): AgentAnswer {
  return { result: 1, description };
}
