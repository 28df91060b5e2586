/**
 * The live dashboard at `GET /dashboard/` on the API-service port: one HTML page, a small
 * script and stylesheet from `src/api/dashboard/`, and uPlot from `node_modules`, all served by
 * gsf itself (no CDN, no build step). The page reads the counters and profiling REST groups.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Feature } from '../../features.ts';
import { gsfError } from '../../errors.ts';
import { queryParam, type ApiRequest, type ApiResponse, type RouteHandler, type Router } from './router.ts';

/** One file the dashboard serves, read once when the feature starts. */
interface Asset {
  body: Buffer;
  contentType: string;
}

const PAGE_DIR = fileURLToPath(new URL('./dashboard/', import.meta.url));

/** Files under `/dashboard/assets/`, by the name in the URL. */
function assetSources(): Record<string, { file: string; contentType: string }> {
  const require = createRequire(import.meta.url);
  return {
    'dashboard.js': { file: `${PAGE_DIR}dashboard.js`, contentType: 'text/javascript; charset=utf-8' },
    'dashboard-view.js': { file: `${PAGE_DIR}dashboard-view.js`, contentType: 'text/javascript; charset=utf-8' },
    'dashboard.css': { file: `${PAGE_DIR}dashboard.css`, contentType: 'text/css; charset=utf-8' },
    'uplot.js': { file: require.resolve('uplot/dist/uPlot.iife.min.js'), contentType: 'text/javascript; charset=utf-8' },
    'uplot.css': { file: require.resolve('uplot/dist/uPlot.min.css'), contentType: 'text/css; charset=utf-8' },
  };
}

// The page only talks to its own origin; uPlot styles its elements through the CSSOM, which
// `style-src 'self'` allows.
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  // The page URL may carry `?token=`: never send it anywhere as a referrer.
  'Referrer-Policy': 'no-referrer',
};

/**
 * Adds `GET /dashboard/` and `GET /dashboard/assets/{name}` to `router`. Every file is read
 * here, once; a missing file fails the start rather than the first request.
 */
export function registerDashboard(router: Router): RouteHandler[] {
  const page = fs.readFileSync(`${PAGE_DIR}index.html`, 'utf8');
  const assets = new Map<string, Asset>();
  for (const [name, { file, contentType }] of Object.entries(assetSources())) {
    assets.set(name, { body: fs.readFileSync(file), contentType });
  }

  const pageRoute: RouteHandler = (req) => servePage(page, req);
  const assetRoute: RouteHandler = (req) => {
    const asset = assets.get(req.params.name ?? '');
    if (!asset) throw gsfError('GSF_ERR_NOT_FOUND', 'GET', req.path);
    return {
      status: 200, body: asset.body, contentType: asset.contentType,
      headers: { ...SECURITY_HEADERS, 'Cache-Control': 'no-cache' },
    };
  };
  router.get('/dashboard/', pageRoute);
  router.get('/dashboard/assets/{name}', assetRoute);
  return [pageRoute, assetRoute];
}

/**
 * The page, with `{{query}}` in its asset URLs replaced by `?token=…` when the page was opened
 * with one, so that `<script>` and `<link>` requests (which cannot send a header) pass the same
 * access check as the page.
 */
function servePage(page: string, req: ApiRequest): ApiResponse {
  const token = queryParam(req, 'token');
  const query = token ? `?token=${encodeURIComponent(token)}` : '';
  return {
    status: 200,
    body: page.replaceAll('{{query}}', query),
    contentType: 'text/html; charset=utf-8',
    headers: { ...SECURITY_HEADERS, 'Cache-Control': 'no-store' },
  };
}

/** The dashboard as a built-in feature: it shows counters, so it comes with `CounterService`. */
export const dashboardFeature: Feature = {
  name: 'dashboard',
  start(ctx) {
    // The page and its assets take the token from `?token=` too (a <script> tag sends no header); nothing else does.
    if (ctx.manifest.listed.has('CounterService')) ctx.api.acceptQueryToken(...registerDashboard(ctx.api.router));
  },
};
