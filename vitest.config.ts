import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS build for every importer; vite would give our code the .mjs build
    // while Pothos and yoga get the CommonJS one: two realms, and "another module or realm" errors.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The second says when the Redis or the browser suite is skipped (no redis-server, no chromium, outside CI), and why.
    reporters: ['default', './test/suite-skip.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
