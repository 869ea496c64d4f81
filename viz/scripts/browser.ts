/**
 * Launches Chromium through playwright-core (never a browser download; which one: docs/dashboard.md):
 * headless, no sandbox, no GPU, no background networking, and a fresh profile folder through
 * launchPersistentContext.
 *
 * Which Chromium:
 *   1. SOCSIM_CHROMIUM, when set: an explicit choice wins (and a wrong path is an error, not a
 *      silent fallback).
 *   2. The one inside the @sparticuz/chromium devDependency (a chrome-headless-shell build for Linux
 *      x64, brotli-compressed in the package and unpacked to the temp folder on first use). It
 *      comes with `npm install`, so `npm test` needs no system browser, and package-lock.json pins
 *      it, so tests and `npm run bench:viz` see the same Chromium on every machine whatever the
 *      distribution ships.
 *   3. /usr/bin/chromium (Debian's package), only where the npm one cannot run (another OS or CPU).
 *
 * The package's own `args` are tuned for AWS Lambda (--single-process, --no-zygote, swiftshader
 * WebGL, --disable-web-security) and are not used: the flags below are enough headless here, and
 * the page should run with normal web security.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

const SYSTEM_CHROMIUM = '/usr/bin/chromium';
const PACKAGE = '@sparticuz/chromium';

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

export interface ChromiumBinary {
  path: string;
  /** `chromium --version`, e.g. "Chromium 153.0.8010.0". */
  version: string;
  source: 'SOCSIM_CHROMIUM' | typeof PACKAGE | 'system';
  /** Environment for the browser process (the package's libraries and fonts where the system lacks them). */
  env: NodeJS.ProcessEnv;
}

const execFileAsync = promisify(execFile);

/** `<exe> --version`, or the reason it does not run (e.g. a missing shared library). */
async function versionOf(exe: string, env: NodeJS.ProcessEnv): Promise<{ version?: string; error?: string }> {
  try {
    const { stdout } = await execFileAsync(exe, ['--version'], { env, timeout: 30_000 });
    return { version: stdout.trim() };
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    return { error: (err.stderr || err.message).trim().split('\n')[0] };
  }
}

/**
 * Runs `f` holding a lock folder in the temp folder, so that two processes (the tests and
 * `npm run screenshot`, say) never unpack the package's Chromium over each other.
 */
async function withUnpackLock<T>(f: () => Promise<T>): Promise<T> {
  const lock = path.join(os.tmpdir(), 'socsim-chromium-unpack.lock');
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    // Unpacking takes seconds: a lock a minute old belongs to a process that was killed.
    let age = 0;
    try {
      age = Date.now() - fs.statSync(lock).mtimeMs;
    } catch {
      continue;
    }
    if (age > 60_000) fs.rmSync(lock, { recursive: true, force: true });
    else await new Promise((r) => setTimeout(r, 100));
  }
  try {
    return await f();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** The package's Chromium, unpacked and checked to run, or why it cannot be used. */
async function packageChromium(): Promise<ChromiumBinary | string> {
  if (process.platform !== 'linux' || process.arch !== 'x64') return `${PACKAGE} ships Linux x64 only (this is ${process.platform} ${process.arch})`;
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(PACKAGE);
  } catch {
    return `${PACKAGE} is not installed (npm install installs it, as a devDependency)`;
  }
  const pkgDir = path.resolve(path.dirname(entry), '..');
  const major = (JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version.split('.')[0];
  const { default: sparticuz, inflate } = await import('@sparticuz/chromium');
  return withUnpackLock(async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    let exe = await sparticuz.executablePath();
    let v = await versionOf(exe, env);
    if (v.error && /shared libraries/.test(v.error)) {
      // A bare Debian lacks NSS and expat (libnss3, libnspr4, libexpat1): use the copies the
      // package ships for Amazon Linux 2023, built against an older glibc.
      const al2023 = await inflate(path.join(pkgDir, 'bin', 'al2023.tar.br'));
      env.LD_LIBRARY_PATH = [path.join(al2023, 'lib'), env.LD_LIBRARY_PATH].filter(Boolean).join(':');
      v = await versionOf(exe, env);
    }
    if (!v.version?.startsWith(`Chromium ${major}.`)) {
      // executablePath() reuses whatever is at <tmp>/chromium: a file cut short by a killed unpack,
      // or another version's. Unpack again, once.
      fs.rmSync(exe, { force: true });
      exe = await sparticuz.executablePath();
      v = await versionOf(exe, env);
      if (!v.version?.startsWith(`Chromium ${major}.`)) return `${exe} (from ${PACKAGE} ${major}) does not run: ${v.error ?? v.version}`;
    }
    // No system fontconfig (a bare Debian): the package's fonts.conf and Open Sans, unpacked by
    // executablePath() to <tmp>/fonts, so that text is drawn at all.
    if (!env.FONTCONFIG_PATH && !fs.existsSync('/etc/fonts/fonts.conf')) env.FONTCONFIG_PATH = path.join(os.tmpdir(), 'fonts');
    return { path: exe, version: v.version, source: PACKAGE, env };
  });
}

let found: Promise<ChromiumBinary> | undefined;

/** The Chromium to launch (see the top of this file for the order); unpacked once per process. */
export function findChromium(): Promise<ChromiumBinary> {
  found ??= (async (): Promise<ChromiumBinary> => {
    const explicit = process.env.SOCSIM_CHROMIUM;
    if (explicit) {
      const v = await versionOf(explicit, process.env);
      if (!v.version) throw new Error(`SOCSIM_CHROMIUM=${explicit} does not run: ${v.error}`);
      return { path: explicit, version: v.version, source: 'SOCSIM_CHROMIUM', env: process.env };
    }
    const fromPackage = await packageChromium();
    if (typeof fromPackage !== 'string') return fromPackage;
    if (fs.existsSync(SYSTEM_CHROMIUM)) {
      const v = await versionOf(SYSTEM_CHROMIUM, process.env);
      if (v.version) return { path: SYSTEM_CHROMIUM, version: v.version, source: 'system', env: process.env };
    }
    throw new Error(`no usable Chromium: ${fromPackage}; no ${SYSTEM_CHROMIUM} either. Run npm install, or set SOCSIM_CHROMIUM to a Chromium binary`);
  })();
  // A failure is not cached: the next call tries again.
  found.catch(() => (found = undefined));
  return found;
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** The binary launched. */
  chromium: ChromiumBinary;
  /** Console errors and uncaught page errors, for tests to assert on. */
  errors: string[];
  close(): Promise<void>;
}

export async function launchBrowser(o: { width?: number; height?: number; colorScheme?: 'light' | 'dark' } = {}): Promise<Browser> {
  const bin = await findChromium();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'socsim-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: bin.path,
    env: bin.env,
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
    chromium: bin,
    errors,
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
