// What `npm run example` at the repository's root runs, once the gateway is built: builds this
// dashboard (types and trusted-documents manifest from ../../schema.graphql, then the bundle), starts the
// gateway (../../dist/bin.js: its sandbox unless UPSTREAM_URL is set, on PORT) with PERSISTED_DOCUMENTS
// set to this build's manifest, and serves the dashboard on EXAMPLE_PORT (5173; 0: any free port).
// Ctrl-C stops both. Installs this folder's packages first when they are missing.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const manifest = join(here, 'src', 'gql', 'persisted-documents.json');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * Runs npm in this folder, its output ours; exits when it fails.
 * @param {...string} args
 */
function npmHere(...args) {
  const { status } = spawnSync(npm, args, { cwd: here, stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
}

if (!existsSync(join(here, 'node_modules', 'vite'))) {
  console.log("Installing the dashboard example's packages (npm ci in examples/dashboard)…");
  npmHere('ci', '--no-audit', '--no-fund');
}
if (process.env.EXAMPLE_SKIP_BUILD !== 'true') npmHere('run', 'build', '--silent');
if (!existsSync(join(root, 'dist', 'bin.js'))) {
  console.error('The gateway is not built: run `npm run example` from the repository root (it builds it first).');
  process.exit(1);
}

/**
 * The gateway, its output passed on; answers its GraphQL endpoint and, with the sandbox, its demo key,
 * read from the lines it prints when it is ready.
 * @returns {Promise<{ child: import('node:child_process').ChildProcess, endpoint: string, demoKey: string | null }>}
 */
function startGateway() {
  const child = spawn(process.execPath, [join(root, 'dist', 'bin.js')], {
    // No load balancer watches this gateway's /ready: Ctrl-C stops it without the drain's wait.
    env: { DRAIN_DELAY_MS: '0', ...process.env, PERSISTED_DOCUMENTS: manifest },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    /** @type {string | null} */
    let endpoint = null;
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      console.log(line);
      const gateway = /^Gateway on (\S+)/.exec(line);
      if (gateway) {
        endpoint = gateway[1] ?? null;
        // Against a real install the banner names no demo key: the user enters theirs.
        if (endpoint && !line.includes('GraphiQL')) resolve({ child, endpoint, demoKey: null });
      }
      const keys = /^Demo keys: ([^,\s]+)/.exec(line);
      if (keys && endpoint) resolve({ child, endpoint, demoKey: keys[1] ?? null });
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before it was ready`)));
  });
}

const gateway = await startGateway().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
process.env.DASHBOARD_GRAPHQL_URL = gateway.endpoint;
if (gateway.demoKey) process.env.DASHBOARD_DEMO_KEY = gateway.demoKey;
const { preview } = await import('vite');
const port = Number(process.env.EXAMPLE_PORT || 5173);
const server = await preview({
  root: here,
  configFile: join(here, 'vite.config.ts'),
  logLevel: 'warn',
  preview: { host: '127.0.0.1', port, strictPort: true },
});
const address = server.httpServer.address();
const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}/`;
console.log(`Dashboard on ${url} (talks to ${gateway.endpoint}, which runs its trusted documents: ${manifest})`);

let stopping = false;
/** @param {number} code */
async function stop(code) {
  if (stopping) return;
  stopping = true;
  await server.close();
  if (gateway.child.exitCode === null) {
    gateway.child.kill('SIGTERM');
    await new Promise((resolve) => gateway.child.once('exit', resolve));
  }
  process.exit(code);
}
process.once('SIGINT', () => void stop(0));
process.once('SIGTERM', () => void stop(0));
gateway.child.once('exit', (code) => void stop(code ?? 1));
// Vite's server exits the process on SIGTERM by itself: the gateway is stopped whichever way this ends.
process.once('exit', () => {
  if (gateway.child.exitCode === null) gateway.child.kill('SIGTERM');
});
