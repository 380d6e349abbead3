// A real Chromium for the explorer's tests: Debian's /usr/bin/chromium driven by playwright-core.
// Without it the tests skip with the reason, unless CI is set: then they fail, so CI cannot pass
// without having run them.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const chromiumPath = '/usr/bin/chromium';

/** The reason to skip browser tests, or false when Chromium is there (or CI demands it). */
export function browserSkip(): string | false {
  if (existsSync(chromiumPath) || process.env['CI']) return false;
  return `${chromiumPath} is missing: install Debian's chromium (apt-get install chromium) to run the explorer's browser tests`;
}

/**
 * Playwright's 30 s default for launching and for each action or wait is a quiet machine's: at
 * load 16 Chromium needs many times longer. A page that never gets there still fails, later.
 */
export const browserTimeoutMs = 120_000;

export function launchBrowser(): Promise<Browser> {
  if (!existsSync(chromiumPath)) throw new Error(`${chromiumPath} is missing (CI must install chromium)`);
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    timeout: browserTimeoutMs,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
