import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

/** The benchmark harness's smoke tests: the project that runs them without isolation (below). */
const BENCH_FILES = 'test/bench/**/*.test.ts';

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS build for every importer; vite would give our code the .mjs build
    // while Pothos and yoga get the CommonJS one: two realms, and "another module or realm" errors.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
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
    projects: [
      // (Each project names its files: a project's include is added to the root's, not put in its place.)
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, BENCH_FILES] } },
      // The smoke tests share their workers: each file imports the whole harness (autocannon, undici, the
      // sandbox's modules), and importing it once per worker instead of once per file saves about 5 s of
      // CPU in their 49 (`/usr/bin/time npx vitest run test/bench`, with and without --no-isolate). They
      // can: every pass ends the processes it started (each file checks), and leaves no listener behind.
      { extends: true, test: { name: 'bench', include: [BENCH_FILES], isolate: false } },
    ],
  },
});
