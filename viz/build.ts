/**
 * Builds the dashboard with vite's JS API (`npm run build`, which the package ships prebuilt in
 * dist/dashboard; the browser tests build their own copy). Output: a static folder (index.html +
 * hashed assets) that runner/serve/serve.ts serves; relative asset URLs, so it works under any path.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const VIZ_ROOT = path.dirname(fileURLToPath(import.meta.url));

export async function buildDashboard(outDir = path.join(VIZ_ROOT, '..', 'dist', 'dashboard')): Promise<{ outDir: string; ms: number }> {
  const t0 = performance.now();
  const { build } = await import('vite');
  await build({
    root: VIZ_ROOT,
    configFile: false,
    base: './',
    logLevel: 'warn',
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      reportCompressedSize: false,
      chunkSizeWarningLimit: 1024,
    },
  });
  return { outDir, ms: performance.now() - t0 };
}

// `node viz/build.ts [outDir]`
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { outDir, ms } = await buildDashboard(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
  process.stdout.write(`built the dashboard into ${path.relative(process.cwd(), outDir) || '.'} in ${(ms / 1000).toFixed(2)} s\n`);
}
