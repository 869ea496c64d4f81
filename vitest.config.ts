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
    // Tests bound work, not time: a timeout only catches a hang. Ten minutes covers the slowest
    // test on a loaded 2-core machine with the software GPU driver several times over; a test that
    // waits on a child process polls for what it waits for, with its own budget.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Integration tests spawn the CLI and worker pools; two cores, so keep files in two forks.
    pool: 'forks',
    maxWorkers: 2,
  },
});
