// Launches the headless Chromium the browser tests drive: Debian's own build, quiet and offline,
// with the command that installs it when it is missing.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
