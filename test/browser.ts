// Debian's chromium for the browser suites (GraphiQL, the dashboard example), driven by playwright-core:
// no browser is downloaded.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type BrowserContextOptions } from 'playwright-core';
import { CHROMIUM_PATH } from './suite-skip.js';

/** The flags of a quiet, throw-away chromium: no sandbox (containers), no GPU, nothing fetched from Google. */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A chromium with a profile of its own in a temporary folder, removed on close. */
export async function launchChromium(timeout: number, options: BrowserContextOptions = {}): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    ...options,
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    timeout,
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
