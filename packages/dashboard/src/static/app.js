// @ts-check
// The dashboard's entry module: wires the chrome (environment, user, logout) and runs the module
// of this page (pages/index.js). No framework, no build step: native ES modules, type-checked by
// tsc through JSDoc (packages/dashboard/tsconfig.browser.json, part of `npm run typecheck`).
import { chrome } from './lib/chrome.js';
import { currentPage } from './lib/api.js';
import { validateAsTyped } from './lib/forms.js';
import { PAGES } from './pages/index.js';

async function start() {
  validateAsTyped();
  const me = await chrome();
  const run = PAGES[currentPage()];
  if (run) await run(me);
  document.body.dataset.ready = 'true';
}

start();
