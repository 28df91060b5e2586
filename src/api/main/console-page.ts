/**
 * The operator console page at `GET /console/` on the API-service port: one HTML page, its
 * browser modules and stylesheet from `src/api/main/console-page/`, served by gsf itself (no CDN, no
 * build step). It drives `/cs-api/v1/` and nothing else, so it comes with `DeployApiService`.
 *
 * The page and its assets hold no data: they are served without the API token, and the page
 * asks the operator for it and sends it with every `/cs-api/v1/` call.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Feature } from '../../features.ts';
import { gsfError } from '../../errors.ts';
import type { ApiResponse, RouteHandler, Router } from './router.ts';
import type { ApiServer } from './server.ts';

const PAGE_DIR = fileURLToPath(new URL('./console-page/', import.meta.url));
const JS = 'text/javascript; charset=utf-8';

/** Files under `/console/assets/`, by the name in the URL, with their content type. */
export const CONSOLE_ASSETS: Record<string, string> = {
  'console.js': JS,
  'console-api.js': JS,
  'console-ui.js': JS,
  'console-accounts.js': JS,
  'console-characters.js': JS,
  'console-live.js': JS,
  'console-audit.js': JS,
  'console.css': 'text/css; charset=utf-8',
};

// The page only talks to its own origin, and nothing may frame it.
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/**
 * Adds `GET /console/` and `GET /console/assets/{name}` to `router`. Every file is read here,
 * once; a missing file fails the start rather than the first request.
 */
export function registerConsolePage(router: Router): RouteHandler[] {
  const page: ApiResponse = {
    status: 200,
    body: fs.readFileSync(`${PAGE_DIR}index.html`, 'utf8'),
    contentType: 'text/html; charset=utf-8',
    headers: { ...SECURITY_HEADERS, 'Cache-Control': 'no-store' },
  };
  const assets = new Map<string, ApiResponse>();
  for (const [name, contentType] of Object.entries(CONSOLE_ASSETS)) {
    assets.set(name, {
      status: 200, body: fs.readFileSync(`${PAGE_DIR}${name}`), contentType,
      headers: { ...SECURITY_HEADERS, 'Cache-Control': 'no-cache' },
    });
  }
  const pageRoute: RouteHandler = () => page;
  const assetRoute: RouteHandler = (req) => {
    const asset = assets.get(req.params.name ?? '');
    if (!asset) throw gsfError('GSF_ERR_NOT_FOUND', 'GET', req.path);
    return asset;
  };
  router.get('/console/', pageRoute);
  router.get('/console/assets/{name}', assetRoute);
  return [pageRoute, assetRoute];
}

/** Mounts the page on `api`, reachable without the token. */
export function mountConsolePage(api: ApiServer): void {
  api.servePublicly(...registerConsolePage(api.router));
}

/** The console page as a built-in feature: it drives `/cs-api/v1/`, so it comes with `DeployApiService`. */
export const consolePageFeature: Feature = {
  name: 'console-page',
  start(ctx) {
    if (ctx.manifest.listed.has('DeployApiService')) mountConsolePage(ctx.api);
  },
};
