import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Files in experiments/ import the public API as a study does ('socsim'); in the tests that is
    // the sources, so that they share one copy of every module with the test itself.
    alias: [{ find: /^socsim$/, replacement: fileURLToPath(new URL('./index.ts', import.meta.url)) }],
  },
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests spawn the CLI and worker pools; two cores, so keep files in two forks.
    pool: 'forks',
    maxWorkers: 2,
  },
});
