// The dashboard example (examples/dashboard/) served as `npm run example` serves it, for its browser suite
// and its benchmark (bench/dashboard.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface ServedExample {
  child: ChildProcess;
  /** The gateway's GraphQL endpoint, the sandbox's base URL, the dashboard's page. */
  endpoint: string;
  sandbox: string;
  dashboard: string;
  demoKey: string;
  output: string[];
}

/**
 * `node examples/dashboard/serve.mjs` of the repository at `root`, on free ports, as `npm run example` runs
 * it (building the example unless EXAMPLE_SKIP_BUILD=true is in `env`), with the sandbox; answers once it
 * prints the page's address.
 */
export function serveExample(root: string, env: Record<string, string> = {}): Promise<ServedExample> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, PORT: '0', EXAMPLE_PORT: '0', ...env };
  delete childEnv.UPSTREAM_URL;
  const child = spawn(process.execPath, [join(root, 'examples', 'dashboard', 'serve.mjs')], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => output.push(line));
  return new Promise((resolve, reject) => {
    const found: Partial<ServedExample> = {};
    createInterface({ input: child.stdout }).on('line', (line) => {
      output.push(line);
      found.endpoint ??= /^Gateway on (\S+)/.exec(line)?.[1];
      found.sandbox ??= /^Upstream: the bundled sandbox at (\S+)/.exec(line)?.[1];
      found.demoKey ??= /^Demo keys: ([^,\s]+)/.exec(line)?.[1];
      const dashboard = /^Dashboard on (\S+)/.exec(line)?.[1];
      if (dashboard && found.endpoint && found.sandbox && found.demoKey) {
        resolve({ child, endpoint: found.endpoint, sandbox: found.sandbox, demoKey: found.demoKey, dashboard, output });
      }
    });
    child.once('exit', (code) => reject(new Error(`serve.mjs exited (${code}) before the page was served:\n${output.join('\n')}`)));
  });
}

/** Stops serve.mjs (SIGTERM), which stops its gateway; answers once both are gone (the gateway's port refuses). */
export async function stopExample(served: ServedExample): Promise<void> {
  if (served.child.exitCode === null && served.child.signalCode === null) {
    const exited = new Promise((resolve) => served.child.once('exit', resolve));
    served.child.kill('SIGTERM');
    await exited;
  }
  const origin = new URL(served.endpoint).origin;
  for (let attempt = 0; attempt < 600; attempt++) {
    const answered = await fetch(`${origin}/health`).then(
      () => true,
      () => false,
    );
    if (!answered) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the gateway at ${origin} was still answering 30 s after serve.mjs stopped`);
}
