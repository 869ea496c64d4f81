/**
 * Launches Debian's Chromium through playwright-core (no browser download), as DESIGN.md section 12
 * says: /usr/bin/chromium (or SOCSIM_CHROMIUM), headless, no sandbox, no GPU, no background
 * networking, and a fresh profile folder through launchPersistentContext.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.SOCSIM_CHROMIUM || '/usr/bin/chromium';

export const CHROMIUM_FLAGS = [
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
  page: Page;
  /** Console errors and uncaught page errors, for tests to assert on. */
  errors: string[];
  close(): Promise<void>;
}

export async function launchBrowser(o: { width?: number; height?: number; colorScheme?: 'light' | 'dark' } = {}): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set SOCSIM_CHROMIUM`);
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: o.width ?? 1400, height: o.height ?? 1000 },
    colorScheme: o.colorScheme ?? 'light',
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  const watch = (p: Page) => {
    p.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    p.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()}`);
    });
  };
  watch(page);
  context.on('page', watch);
  return {
    context,
    page,
    errors,
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
