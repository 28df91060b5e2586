/**
 * Runtime configuration REST (SPEC 4.2). Changes are live and temporary: the flag registry is
 * changed in place (and published to every worker); MANIFEST.json is never written.
 *   GET  /v1/configurations/                           {"<flag>": {type, desc, value}, ...}
 *   GET  /v1/configurations/{flag}                     {"<flag>": {type, desc, value}} | 400
 *   PUT  /v1/configurations/{flag}/{value}             {"<flag>": {"result": "<flag> set to <stored value>\n"}} | 400
 *                                                      | 409 GSF_ERR_CONFIG_NOT_APPLIED (answered once the change took effect)
 *   PUT  /v1/configurations/{flag}/                    the same, setting the empty string (a string flag's)
 *   GET  /v1/configurations/compatible_client_versions {"current_compatible_versions": [...]}
 *   POST /v1/configurations/compatible_client_versions JSON array of strings → the new list | 400
 * The two changes take `?cluster=true` (with the Cluster component): made here first, then on
 * every other server; the answer adds `cluster: {applied, failed}`.
 */
import type { FlagRegistry } from '../../config/flags.ts';
import { flagText, invalidText, setText } from '../../config/flags.ts';
import { GsfError, describeError, gsfError } from '../../errors.ts';
import { clusterRequested } from '../../hooks/cluster-hooks.ts';
import { errorResponse, queryParam, type ApiRequest, type ApiResponse, type Router } from './router.ts';
import { jsonBody } from './dispatch.ts';

const VERSIONS = 'client_compatible_versions';
/** The path segment of that list (POSTed whole, never PUT). */
const LIST = 'compatible_client_versions';

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
    const cluster = clusterRequested(queryParam(req, 'cluster'));
    let list: unknown;
    try {
      // The shared reader: an unpaired surrogate escape, a key `__proto__` or too deep a body is a 400 here too.
      list = jsonBody(req);
    } catch (err) {
      if (describeError(err) === 'request body is not valid JSON') throw gsfError('GSF_ERR_BAD_REQUEST', 'body must be a JSON array of strings (it is not JSON)');
      throw err;
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

  router.put('/v1/configurations/{flag}/{value}', (req) => (req.params.flag === LIST ? listNotPut(req) : putFlag(flags, req, req.params.flag!, req.params.value!)));

  // The router takes no empty segment, so the empty value is the path ending in `/` after the
  // flag's name; without that `/` the value was left out, which must not clear the flag.
  router.put('/v1/configurations/{flag}', (req) => {
    const name = req.params.flag!;
    if (name === LIST) return listNotPut(req);
    if (req.path.endsWith('/')) return putFlag(flags, req, name, '');
    const info = flags.info(name);
    if (!info || !info.mutable) return unknownFlag(flags, name);
    return { status: 400, body: { [name]: { result: `a value is needed: PUT /v1/configurations/${name}/{value}, or /v1/configurations/${name}/ for the empty string\n` } } };
  });
}

/** Any PUT of `compatible_client_versions` (a list, POSTed whole): 405. */
function listNotPut(req: ApiRequest): ApiResponse {
  const allowed = ['GET', 'HEAD', 'POST'];
  return errorResponse(new GsfError('GSF_ERR_METHOD_NOT_ALLOWED', ['PUT', req.path], { details: { allowed } }), { Allow: allowed.join(', ') });
}

/** A PUT of one flag: 200 with the value stored, 400 for a bad value or flag, 409 when it could not take effect. */
async function putFlag(flags: FlagRegistry, req: ApiRequest, name: string, value: string): Promise<ApiResponse> {
  const cluster = clusterRequested(queryParam(req, 'cluster'));
  const result = await flags.setFromTextApplied(name, value);
  if (!result.ok && result.reason === 'not_applied') {
    // Valid, but it could not take effect (an event-thread resize whose threads did not load):
    // the value in effect stays (a change applied before this one's included).
    const stays = flags.info(name)!.value;
    throw new GsfError('GSF_ERR_CONFIG_NOT_APPLIED', [name, flagText(stays), flagText(result.value), describeError(result.error)], { cause: result.error });
  }
  if (!result.ok && result.reason !== 'invalid') return unknownFlag(flags, name);
  // SPEC 4.2's text, then why when it is known (a number out of range, a NUL in a string).
  if (!result.ok) return { status: 400, body: { [name]: { result: `${invalidText(name, value, result.problem)}\n` } } };
  const answer: Record<string, unknown> = { result: `${setText(name, result.value)}\n` };
  // The other servers get the value stored here, so each stores the same.
  if (cluster !== null) answer.cluster = await cluster.flag(name, flagText(result.value));
  return { status: 200, body: { [name]: answer } };
}
