import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS build for every importer; vite would give our code the .mjs build
    // while Pothos and yoga get the CommonJS one: two realms, and "another module or realm" errors.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The second says which tests are skipped for want of a program outside npm (test/system-programs.ts), and why.
    reporters: ['default', './test/suite-skip.ts'],
    // Two files at a time, whatever the machine (vitest's default is one fewer than the cores: one on
    // CI's two). Most of a file's time is spent waiting on sockets and child processes, and every test
    // waits for the event it means, not for a period: it passes beside another file, and beside a busy
    // process (CONTRIBUTING.md#a-busy-machine).
    maxWorkers: 2,
    // The tests start gateways and sandboxes by the hundred: node's compile cache (keyed by each file's
    // contents and node's version) takes a quarter off each start (dist/gateway.js: 350 -> 270 ms).
    env: {
      NODE_COMPILE_CACHE:
        process.env.NODE_COMPILE_CACHE ?? fileURLToPath(new URL('./node_modules/.cache/node-compile-cache', import.meta.url)),
    },
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
