/**
 * Screenshots of every dashboard page, in headless Chromium (Debian's `chromium`, through
 * playwright-core), for a look at the UI without a browser:
 *
 *   npm start                                   # the local stack, with the demo user seeded
 *   npx tsx scripts/dashboard-screenshots.ts [out-dir]   # default docs/screenshots
 *
 * Signs in as the demo user of .stack/demo.env (or DTE_DASHBOARD_URL / DTE_DASHBOARD_EMAIL /
 * DTE_DASHBOARD_PASSWORD) and writes two PNGs per page of the dashboard's registry (full page at
 * 1 280 px, and `-movil` at 390 px): packages/dashboard/src/screenshots.ts. The e2e test
 * (packages/dashboard/test/dashboard-e2e.test.ts) runs the same capture over its own data; with
 * DASHBOARD_SCREENSHOTS_DIR=docs/screenshots it regenerates the committed screenshots.
 */
import fs from 'node:fs';
import path from 'node:path';
import { captureDashboard } from '../packages/dashboard/src/screenshots';

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

async function main(): Promise<void> {
  const env = demoEnv();
  const url = env.DTE_DASHBOARD_URL ?? 'http://127.0.0.1:3000/dashboard';
  if (!env.DTE_DASHBOARD_EMAIL || !env.DTE_DASHBOARD_PASSWORD) {
    throw new Error(
      'no demo user: run `npm start` first (it seeds one), or set DTE_DASHBOARD_EMAIL and DTE_DASHBOARD_PASSWORD',
    );
  }
  const out = path.resolve(process.argv[2] ?? path.join(ROOT, 'docs', 'screenshots'));
  await captureDashboard({
    url,
    email: env.DTE_DASHBOARD_EMAIL,
    password: env.DTE_DASHBOARD_PASSWORD,
    out,
    log: (file) => console.log(`[screenshots] ${file}`),
  });
}

main().catch((err: unknown) => {
  console.error(`[screenshots] ${(err as Error).message}`);
  process.exit(1);
});
