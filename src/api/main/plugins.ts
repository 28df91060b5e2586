/**
 * Plugins on the API service: the list and hot reload (docs/guides/hot-reload.md), behind the
 * service's token like every route.
 *
 *   GET  /v1/plugins/                  200 {"plugins": [...]}
 *   GET  /v1/plugins/{name}            200 one plugin, 404 GSF_ERR_PLUGIN_NOT_FOUND
 *   POST /v1/plugins/reload            200 every plugin whose source changed (none: "reloaded": [])
 *   POST /v1/plugins/{name}/reload     200 that plugin if its source changed; ?force=true even if not
 *
 * A reload answers when the new version serves: 404 for an unknown plugin, 409 while another
 * reload runs, 422 when the new code cannot go in (the old version keeps serving), 503 while
 * the server stops.
 */
import { gsfError } from '../../errors.ts';
import type { PluginReloader } from '../../plugins/reload.ts';
import { queryParam, type ApiRequest, type ApiResponse, type Router } from './router.ts';

/**
 * `?force=`: true, false or absent. Nothing else forces: an empty value (a script's unset
 * variable) or a second `force` is refused rather than read as true.
 */
function force(req: ApiRequest): boolean {
  const value = queryParam(req, 'force');
  if (value === null) return false;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw gsfError('GSF_ERR_BAD_REQUEST', `force must be true or false, got '${value}'`);
}

/** Adds the plugin routes; `reloader` is null until the server has started. */
export function registerPluginRoutes(router: Router, reloader: () => PluginReloader | null): void {
  const get = (): PluginReloader => {
    const running = reloader();
    if (running === null) throw gsfError('GSF_ERR_RELOAD_UNAVAILABLE', 'the server is not running');
    return running;
  };
  router.get('/v1/plugins', (): ApiResponse => ({ status: 200, body: { plugins: get().list() } }));
  router.get('/v1/plugins/{name}', (req): ApiResponse => {
    const all = get().list();
    const one = all.find((p) => p.name === req.params.name);
    if (one === undefined) throw gsfError('GSF_ERR_PLUGIN_NOT_FOUND', req.params.name, all.map((p) => `'${p.name}'`).join(', ') || 'none');
    return { status: 200, body: one };
  });
  router.post('/v1/plugins/reload', async (req): Promise<ApiResponse> => {
    if (req.query.has('force')) throw gsfError('GSF_ERR_BAD_REQUEST', 'force applies to one plugin: POST /v1/plugins/{name}/reload?force=true');
    return { status: 200, body: await get().reload(null) };
  });
  router.post('/v1/plugins/{name}/reload', async (req): Promise<ApiResponse> => {
    const forced = force(req);
    return { status: 200, body: await get().reload([req.params.name!], forced) };
  });
}
