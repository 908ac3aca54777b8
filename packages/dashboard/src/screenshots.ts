import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page as BrowserPage } from 'playwright-core';
import { launchChromium } from './browser';
import { PAGES } from './pages';

/**
 * Screenshots of every dashboard page (the registry of pages.ts, so a new page is included
 * without touching this file), signed in as a user of a running api: full page at 1 280 px, and
 * each page again at a phone's width (390 px, `<name>-movil.png`). Used by
 * scripts/dashboard-screenshots.ts and by the dashboard e2e test.
 */
export interface ScreenshotOptions {
  /** the dashboard's base URL, e.g. http://127.0.0.1:3000/dashboard */
  url: string;
  email: string;
  password: string;
  out: string;
  /** a browser to reuse (else one is launched and closed) */
  browser?: Browser;
  log?: (line: string) => void;
}

export const WIDE = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** The file name of a page's screenshot: /documentos/:id → documento, /api-keys → api-keys. */
export function screenshotName(pagePath: string): string {
  return pagePath === '/documentos/:id' ? 'documento' : pagePath.slice(1).replace(/\//g, '-');
}

export async function captureDashboard(opts: ScreenshotOptions): Promise<string[]> {
  const browser = opts.browser ?? (await launchChromium());
  const written: string[] = [];
  const log = opts.log ?? (() => undefined);
  fs.mkdirSync(opts.out, { recursive: true });
  try {
    const context = await browser.newContext({
      viewport: WIDE,
      locale: 'es-CL',
      timezoneId: 'America/Santiago',
    });
    const page = await context.newPage();
    const ready = () => page.locator('body[data-ready="true"]').waitFor({ timeout: 15_000 });
    const snap = async (name: string) => {
      for (const [suffix, viewport] of [
        ['', WIDE],
        ['-movil', PHONE],
      ] as const) {
        await page.setViewportSize(viewport);
        const file = path.join(opts.out, `${name}${suffix}.png`);
        await page.screenshot({ path: file, fullPage: true });
        written.push(file);
        log(file);
      }
      await page.setViewportSize(WIDE);
    };
    await page.goto(`${opts.url}/ingresar`);
    await ready();
    await snap('ingresar');
    await page.locator('#login-email').fill(opts.email);
    await page.locator('#login-password').fill(opts.password);
    await page.getByRole('button', { name: 'Ingresar' }).click();
    await page.waitForURL((u) => !u.pathname.endsWith('/ingresar'), { timeout: 15_000 });
    for (const p of PAGES) {
      if (p.path === '/ingresar') continue;
      if (p.path.includes(':')) {
        if (!(await openFirstDocument(page, opts.url, ready))) continue;
      } else {
        await page.goto(`${opts.url}${p.path}`);
        await ready();
      }
      await snap(screenshotName(p.path));
    }
    await context.close();
  } finally {
    if (!opts.browser) await browser.close();
  }
  return written;
}

/** The detail page of the newest document, if there is one. */
async function openFirstDocument(
  page: BrowserPage,
  url: string,
  ready: () => Promise<void>,
): Promise<boolean> {
  await page.goto(`${url}/documentos`);
  await ready();
  const first = page.locator('#tabla-documentos tbody a').first();
  if (!(await first.count())) return false;
  await first.click();
  await page.waitForURL(/\/documentos\/[0-9a-f-]{36}/);
  await ready();
  return true;
}
