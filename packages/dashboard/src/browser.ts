import { chromium, type Browser } from 'playwright-core';

/**
 * Headless Chromium from Debian's `chromium` package (no browser download), as the tests and the
 * screenshot script launch it. CHROMIUM_PATH overrides the executable.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
}
