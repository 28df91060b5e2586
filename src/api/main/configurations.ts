/**
 * Runtime configuration REST (SPEC 4.2). Changes are live and temporary: the flag registry is
 * changed in place (and published to every worker); MANIFEST.json is never written.
 *   GET  /v1/configurations/                           {"<flag>": {type, desc, value}, ...}
 *   GET  /v1/configurations/{flag}                     {"<flag>": {type, desc, value}} | 400
 *   PUT  /v1/configurations/{flag}/{value}             {"<flag>": {"result": "<flag> set to <value>\n"}} | 400
 *                                                      | 409 GSF_ERR_CONFIG_NOT_APPLIED (answered once the change took effect)
 *   GET  /v1/configurations/compatible_client_versions {"current_compatible_versions": [...]}
 *   POST /v1/configurations/compatible_client_versions JSON array of strings → the new list | 400
 * The two changes take `?cluster=true` (with the Cluster component): made here first, then on
 * every other server; the answer adds `cluster: {applied, failed}`.
 */
import type { FlagRegistry } from '../../config/flags.ts';
import { flagText } from '../../config/flags.ts';
import { GsfError, describeError, gsfError } from '../../errors.ts';
import { clusterRequested } from '../../hooks/cluster-hooks.ts';
import type { ApiResponse, Router } from './router.ts';

const VERSIONS = 'client_compatible_versions';

function listing(flags: FlagRegistry): Record<string, { type: string; desc: string; value: string }> {
  const out: Record<string, { type: string; desc: string; value: string }> = {};
  for (const f of flags.listMutable()) out[f.name] = { type: f.type, desc: f.desc, value: flagText(f.value) };
  return out;
}

function unknownFlag(flags: FlagRegistry, name: string): ApiResponse {
  const available: Record<string, { type: string; desc: string }> = {};
  for (const f of flags.listMutable()) available[f.name] = { type: f.type, desc: f.desc };
  return {
    status: 400,
    body: { [name]: { message: `'${name}' is not a configurable flag`, available_configurations: available } },
  };
}

export function registerConfigurationRoutes(router: Router, flags: FlagRegistry): void {
  router.get('/v1/configurations', () => ({ status: 200, body: listing(flags) }));

  router.get('/v1/configurations/compatible_client_versions', () => ({
    status: 200, body: { current_compatible_versions: flags.get<string[]>(VERSIONS) },
  }));

  router.post('/v1/configurations/compatible_client_versions', async (req) => {
    const cluster = clusterRequested(req);
    let list: unknown;
    try {
      list = JSON.parse(req.body.toString('utf8'));
    } catch {
      throw gsfError('GSF_ERR_BAD_REQUEST', 'body must be a JSON array of strings (it is not JSON)');
    }
    if (!Array.isArray(list) || !list.every((v) => typeof v === 'string')) {
      throw gsfError('GSF_ERR_BAD_REQUEST', 'body must be a JSON array of strings');
    }
    // An empty entry would be listed as accepted while no client can send it as its version.
    if (list.includes('')) throw gsfError('GSF_ERR_BAD_REQUEST', `body must be a JSON array of non-empty strings (entry ${list.indexOf('')} is empty)`);
    flags.set(VERSIONS, list as string[]);
    const body: Record<string, unknown> = { current_compatible_versions: flags.get<string[]>(VERSIONS) };
    if (cluster !== null) body.cluster = await cluster.compatibleVersions(list as string[]);
    return { status: 200, body };
  });

  router.get('/v1/configurations/{flag}', (req) => {
    const name = req.params.flag!;
    const info = flags.info(name);
    if (!info || !info.mutable) return unknownFlag(flags, name);
    return { status: 200, body: { [name]: { type: info.type, desc: info.desc, value: flagText(info.value) } } };
  });

  router.put('/v1/configurations/{flag}/{value}', async (req) => {
    const name = req.params.flag!;
    const value = req.params.value!;
    const cluster = clusterRequested(req);
    const result = await flags.setFromTextApplied(name, value);
    if (!result.ok && result.reason === 'not_applied') {
      // Valid, but it could not take effect (an event-thread resize whose threads did not load):
      // the value in effect stays (a change applied before this one's included).
      const stays = flags.info(name)!.value;
      throw new GsfError('GSF_ERR_CONFIG_NOT_APPLIED', [name, flagText(stays), value, describeError(result.error)], { cause: result.error });
    }
    if (!result.ok && result.reason !== 'invalid') return unknownFlag(flags, name);
    if (!result.ok) {
      // SPEC 4.2's text, then why when the value is a number out of range.
      const why = result.problem ? `: ${name} ${result.problem}` : '';
      return { status: 400, body: { [name]: { result: `${value} is not a valid value for ${name}${why}\n` } } };
    }
    const answer: Record<string, unknown> = { result: `${name} set to ${value}\n` };
    if (cluster !== null) answer.cluster = await cluster.flag(name, value);
    return { status: 200, body: { [name]: answer } };
  });
}
