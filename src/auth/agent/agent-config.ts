/**
 * The authenticator agent's manifest, in the server's form:
 * `{"components": [{"name": "Authenticator", "arguments": {"enabled": 1, …}}, {"name": "Logging", …}]}`.
 * Problems stop the start with a TypeError naming the file, the component and the argument.
 */
import { COMPONENTS, ms, port, type ArgSpec, type ComponentSchema } from '../../config/schema.ts';
import { ManifestError, parseComponentList, readManifestJson, type ComponentArgs } from '../../config/manifest.ts';

const u64 = (def: number, desc: string, min = 0): ArgSpec => ({ type: 'uint64', default: def, desc, min });
const str = (def: string, desc: string): ArgSpec => ({ type: 'string', default: def, desc });

/** Arguments of the `Authenticator` component. */
export const AUTHENTICATOR_SCHEMA: ComponentSchema = {
  enabled: u64(0, 'The agent runs only when this is 1'),
  address: { ...str('127.0.0.1', 'Listen address'), address: true },
  port: port(12800, 'Listen port (0 picks a free port)'),
  max_body_bytes: u64(65536, 'Largest accepted request body', 1),
  cache_ttl_in_sec: u64(300, 'How long a positive platform answer is reused (0: no cache)'),
  cache_max_entries: u64(100000, 'Most cached answers; the oldest go first', 1),
  max_concurrent_platform_requests: u64(64, 'Platform requests in flight at once', 1),
  max_waiting_platform_requests: u64(10000, 'Platform requests allowed to wait for a slot; more answer result 6'),
  friend_list_max_pages: u64(100, 'Most friend-list pages followed for one request', 1),
  socialnet_base_url: str('', 'Graph API base URL of socialnet, e.g. https://graph.socialnet.example/v19.0'),
  socialnet_app_id: str('', 'socialnet app id'),
  socialnet_app_secret: str('', 'socialnet app secret'),
  socialnet_request_timeout_in_ms: ms(5000, 'Timeout of one socialnet request', 1),
  microblog_base_url: str('', 'REST API base URL of microblog, e.g. https://api.microblog.example'),
  microblog_consumer_key: str('', 'microblog OAuth consumer key'),
  microblog_consumer_secret: str('', 'microblog OAuth consumer secret'),
  microblog_request_timeout_in_ms: ms(5000, 'Timeout of one microblog request', 1),
};

const AGENT_COMPONENTS: Record<string, ComponentSchema> = {
  Authenticator: AUTHENTICATOR_SCHEMA,
  Logging: COMPONENTS.Logging!,
};

export interface AgentConfig {
  file: string;
  dir: string;
  authenticator: AuthenticatorArgs;
  logging: ComponentArgs;
}

export interface AuthenticatorArgs {
  enabled: number;
  address: string;
  port: number;
  max_body_bytes: number;
  cache_ttl_in_sec: number;
  cache_max_entries: number;
  max_concurrent_platform_requests: number;
  max_waiting_platform_requests: number;
  friend_list_max_pages: number;
  socialnet_base_url: string;
  socialnet_app_id: string;
  socialnet_app_secret: string;
  socialnet_request_timeout_in_ms: number;
  microblog_base_url: string;
  microblog_consumer_key: string;
  microblog_consumer_secret: string;
  microblog_request_timeout_in_ms: number;
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.host !== '' && u.search === '' && u.hash === '';
  } catch {
    return false;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads and validates an authenticator manifest file. */
export function loadAgentConfig(file: string): AgentConfig {
  const { json, shown, dir } = readManifestJson(file);
  return parseAgentConfig(json, shown, dir);
}

/** Validates a parsed authenticator manifest; refuses one whose `enabled` is not 1. */
export function parseAgentConfig(json: unknown, shown: string, dir: string): AgentConfig {
  if (!isPlainObject(json)) throw new ManifestError(`${shown}: must be a JSON object with "components"`);
  for (const key of Object.keys(json)) {
    if (key !== 'components') throw new ManifestError(`${shown}: unknown top-level key "${key}" (allowed: components)`);
  }
  const { components: values } = parseComponentList(json.components, shown, AGENT_COMPONENTS);
  const auth = values.Authenticator as unknown as AuthenticatorArgs;
  if (auth.enabled !== 1) {
    throw new ManifestError(`${shown}: Authenticator.enabled is ${auth.enabled}: the authenticator runs only when it is 1`);
  }
  for (const platform of ['socialnet', 'microblog'] as const) {
    const url = auth[`${platform}_base_url`];
    if (url !== '' && !isHttpUrl(url)) {
      throw new ManifestError(`${shown}: Authenticator.${platform}_base_url must be an http:// or https:// URL without query or fragment`);
    }
  }
  return { file: shown, dir, authenticator: auth, logging: values.Logging! };
}
