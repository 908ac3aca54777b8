/**
 * Screenshots of the dashboard's main pages, in headless Chromium (Debian's `chromium`, through
 * playwright-core), for a look at the UI without a browser:
 *
 *   npm start                                   # the local stack, with the demo user seeded
 *   npx tsx scripts/dashboard-screenshots.ts [out-dir]   # default .stack/screenshots
 *
 * Signs in as the demo user of .stack/demo.env (or DTE_DASHBOARD_URL / DTE_DASHBOARD_EMAIL /
 * DTE_DASHBOARD_PASSWORD) and writes one PNG per page (full page, 1280 px wide). The e2e test
 * (packages/dashboard/test/dashboard-e2e.test.ts) also saves the pages it visits.
 */
import fs from 'node:fs';
import path from 'node:path';
import { launchChromium } from '../packages/dashboard/src/browser';

const ROOT = path.resolve(__dirname, '..');
const STACK_DIR = process.env.DTE_STACK_DIR ?? path.join(ROOT, '.stack');

function demoEnv(): Record<string, string> {
  const file = path.join(STACK_DIR, 'demo.env');
  const out: Record<string, string> = {};
  if (fs.existsSync(file)) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      const m = /^([A-Z_]+)=(.*)$/.exec(line);
      if (m) out[m[1]!] = m[2]!;
    }
  }
  return {
    ...out,
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('DTE_DASHBOARD_'))),
  } as Record<string, string>;
}

const PAGES = [
  'documentos',
  'emitir',
  'certificados',
  'folios',
  'webhooks',
  'api-keys',
  'miembros',
  'auditoria',
  'organizacion',
];

async function main(): Promise<void> {
  const env = demoEnv();
  const url = env.DTE_DASHBOARD_URL ?? 'http://127.0.0.1:3000/dashboard';
  if (!env.DTE_DASHBOARD_EMAIL || !env.DTE_DASHBOARD_PASSWORD) {
    throw new Error(
      'no demo user: run `npm start` first (it seeds one), or set DTE_DASHBOARD_EMAIL and DTE_DASHBOARD_PASSWORD',
    );
  }
  const out = path.resolve(process.argv[2] ?? path.join(STACK_DIR, 'screenshots'));
  fs.mkdirSync(out, { recursive: true });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'es-CL' });
    const ready = () => page.locator('body[data-ready="true"]').waitFor({ timeout: 15_000 });
    await page.goto(`${url}/ingresar`);
    await ready();
    await page.screenshot({ path: path.join(out, 'ingresar.png'), fullPage: true });
    await page.locator('#login-email').fill(env.DTE_DASHBOARD_EMAIL);
    await page.locator('#login-password').fill(env.DTE_DASHBOARD_PASSWORD);
    await page.getByRole('button', { name: 'Ingresar' }).click();
    await page.waitForURL((u) => !u.pathname.endsWith('/ingresar'), { timeout: 15_000 });
    for (const name of PAGES) {
      await page.goto(`${url}/${name}`);
      await ready();
      const file = path.join(out, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      console.log(`[screenshots] ${file}`);
    }
    const first = page.locator('#tabla-documentos a').first();
    await page.goto(`${url}/documentos`);
    await ready();
    if (await first.count()) {
      await first.click();
      await ready();
      await page.screenshot({ path: path.join(out, 'documento.png'), fullPage: true });
      console.log(`[screenshots] ${path.join(out, 'documento.png')}`);
    }
  } finally {
    await browser.close();
  }
}

main().catch((err: unknown) => {
  console.error(`[screenshots] ${(err as Error).message}`);
  process.exit(1);
});
