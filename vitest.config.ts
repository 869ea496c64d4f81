import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests spawn the CLI and worker pools; two cores, so keep files in two forks.
    pool: 'forks',
    maxWorkers: 2,
  },
});
