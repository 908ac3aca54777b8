import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Middleware } from 'koa';
import type { Page } from './page';
import { PAGES, renderPage } from './pages';

/**
 * @dte/dashboard: the web UI, served by the api under /dashboard (see README.md). Pages are
 * server-rendered HTML shells; static/app.js and its page modules (static/pages/) fill them from the api's JSON routes (/api/v1)
 * with the session cookie, so the dashboard holds no business rule of its own and every
 * mutation passes the api's own authentication, role and cross-origin checks.
 */
export const DASHBOARD_PATH = '/dashboard';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The es-CL formats (@dte/es-cl: one plain ES module the server imports too), served to the
 * browser as static/es-cl/index.js, where lib/format.js imports it from.
 */
export const ES_CL_MODULE_PATH = '/static/es-cl/index.js';

/**
 * Every file of static/ (the entry module app.js, lib/ and pages/ modules, the styles, the icon)
 * by its path under /dashboard, and @dte/es-cl's module, read once at start.
 */
function dashboardFiles(): Map<string, StaticFile> {
  const files = staticFiles();
  files.set(ES_CL_MODULE_PATH, { type: TYPES['.js']!, body: readFileSync(require.resolve('@dte/es-cl')) });
  return files;
}

function staticFiles(dir = path.join(__dirname, 'static'), prefix = '/static'): Map<string, StaticFile> {
  const out = new Map<string, StaticFile>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      for (const [k, v] of staticFiles(file, `${prefix}/${entry.name}`)) out.set(k, v);
      continue;
    }
    const type = TYPES[path.extname(entry.name)];
    if (type) out.set(`${prefix}/${entry.name}`, { type, body: readFileSync(file) });
  }
  return out;
}
interface StaticFile {
  type: string;
  body: Buffer;
}

/** The icon browsers ask for at the site's root (pages link it too): no 404 in the console. */
export const FAVICON_PATH = '/favicon.ico';

/** Strict headers of every dashboard answer: only our own scripts and styles, never framed. */
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
};

function matchPage(sub: string): Page | undefined {
  for (const p of PAGES) {
    const re = new RegExp(`^${p.path.replace(/:[a-z]+/g, '[0-9a-fA-F-]{36}')}/?$`);
    if (re.test(sub)) return p;
  }
  return undefined;
}

/** Koa middleware answering GET/HEAD under /dashboard; anything else passes through. */
export function dashboard(): Middleware {
  const rendered = new Map(PAGES.map((p) => [p.path, renderPage(p)]));
  const files = dashboardFiles();
  const icon = files.get('/static/favicon.svg');
  return async (ctx, next) => {
    if (ctx.path === FAVICON_PATH && icon && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      ctx.type = icon.type;
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = icon.body;
      return;
    }
    if (ctx.path !== DASHBOARD_PATH && !ctx.path.startsWith(`${DASHBOARD_PATH}/`)) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const sub = ctx.path.slice(DASHBOARD_PATH.length) || '/';
    ctx.set(SECURITY_HEADERS);
    if (sub === '/') {
      ctx.redirect(`${DASHBOARD_PATH}/documentos`);
      return;
    }
    const file = files.get(sub);
    if (file) {
      ctx.type = file.type;
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = file.body;
      return;
    }
    const page = matchPage(sub);
    if (!page) return next();
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = rendered.get(page.path);
  };
}

export { PAGES } from './pages';
