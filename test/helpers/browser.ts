// Launches the headless Chromium the browser tests drive: Debian's own build, quiet and offline,
// with the command that installs it when it is missing.
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

// No sandbox (containers run tests as root), no GPU, and nothing that calls home during a test.
const QUIET_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches headless Chromium with the quiet flags plus `extraArgs` (e.g. `--ignore-certificate-errors`). */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The browser test needs Debian's Chromium at ${CHROMIUM}: sudo apt-get install chromium`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, args: [...QUIET_ARGS, ...extraArgs] });
}

/** A page of another site that sends its visitor's browser to `lure` at once, as a login-CSRF attacker's. */
export async function startLurePage(
  lure: string,
  host: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const page: Server = createServer((_req, res) => {
    res.setHeader('Content-Type', 'text/html');
    res.end(
      `<!doctype html><title>Free gems</title><script>location.href = ${JSON.stringify(lure)};</script>`,
    );
  });
  page.listen(0, host);
  await once(page, 'listening');
  return {
    url: `http://${host}:${(page.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => page.close(() => resolve())),
  };
}

/** The page opens the lure page, which sends it to the callback: refused, 403 and the entry page's text. */
export async function expectLureRefused(page: Page, lureUrl: string, callbackUrl: string) {
  const refused = page.waitForResponse((res) => res.url().startsWith(callbackUrl));
  await page.goto(lureUrl);
  expect((await refused).status()).toBe(403);
  await expect(page.locator('body').textContent()).resolves.toContain(
    'did not come from the platform',
  );
}
