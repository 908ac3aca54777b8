import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Middleware } from 'koa';
import { PAGES, renderPage, type Page } from './pages';

/**
 * @dte/dashboard: the web UI, served by the api under /dashboard (see README.md). Pages are
 * server-rendered HTML shells; static/app.js fills them from the api's JSON routes (/api/v1)
 * with the session cookie, so the dashboard holds no business rule of its own and every
 * mutation passes the api's own authentication, role and cross-origin checks.
 */
export const DASHBOARD_PATH = '/dashboard';

const STATIC: Record<string, { type: string; file: string }> = {
  '/static/app.js': { type: 'text/javascript; charset=utf-8', file: 'app.js' },
  '/static/app.css': { type: 'text/css; charset=utf-8', file: 'app.css' },
  '/static/agentes.js': { type: 'text/javascript; charset=utf-8', file: 'agentes.js' },
  '/static/plan.js': { type: 'text/javascript; charset=utf-8', file: 'plan.js' },
};

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
  const files = new Map(
    Object.entries(STATIC).map(([k, v]) => [
      k,
      { ...v, body: readFileSync(path.join(__dirname, 'static', v.file)) },
    ]),
  );
  return async (ctx, next) => {
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
