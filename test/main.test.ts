// `npm start` as a user meets it: the built entry point, with no UPSTREAM_URL, embeds the sandbox.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tuneHeap } from '../src/main.js';
import { dataOf, postGraphQL } from './fixture.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGTERM');
  child = undefined;
});

function start(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const proc = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const { stdout, stderr } = proc;
  if (stdout === null || stderr === null) throw new Error('spawned without piped stdout and stderr');
  let output = '';
  stdout.on('data', (chunk) => (output += chunk));
  stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
  return { child: proc, output: () => output, exited };
}

async function waitFor(output: () => string, pattern: RegExp): Promise<RegExpExecArray> {
  for (let i = 0; i < 200; i++) {
    const match = pattern.exec(output());
    if (match) return match;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${pattern}; output so far:\n${output()}`);
}

describe('npm start', () => {
  it('embeds the sandbox when no UPSTREAM_URL is set, prints how to use it, and answers', async () => {
    const run = start({ PORT: '0' });
    child = run.child;
    const [, endpoint] = await waitFor(run.output, /Gateway on (http:\/\/\S+\/graphql)/);
    if (endpoint === undefined) throw new Error('no endpoint in the banner');
    await waitFor(run.output, /Browser apps allowed/);
    expect(run.output()).toContain('sandbox-key-1');
    expect(run.output()).toContain('curl -s');
    expect(run.output()).toContain('Browser apps allowed (CORS): http://localhost:* and http://127.0.0.1:* (not in production)');
    const response = await postGraphQL<{ websites: { totalCount: number } }>(
      endpoint,
      { query: '{ websites { totalCount } }' },
      {
        authorization: 'Bearer sandbox-key-1',
      },
    );
    expect(response.errors).toBeUndefined();
    expect(dataOf(response).websites.totalCount).toBeGreaterThanOrEqual(6);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('stops with exit code 2 and a clear message on invalid configuration', async () => {
    const run = start({ PORT: 'eighty', UPSTREAM_URL: 'not a url' });
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('PORT must be an integer from 0 to 65535, got "eighty"');
    expect(run.output()).toContain('UPSTREAM_URL must be an absolute http(s) URL');
  });
});

describe('tuneHeap', () => {
  it('tunes the heap unless HEAP_GROWING_PERCENT is 0 or node was given the flag itself', () => {
    const set: string[] = [];
    const record = (flags: string) => void set.push(flags);
    expect(tuneHeap(50, ['--enable-source-maps'], record)).toBe(true);
    expect(tuneHeap(0, [], record)).toBe(false);
    expect(tuneHeap(50, ['--heap-growing-percent=80'], record)).toBe(false);
    expect(tuneHeap(50, ['--heap-growing-percent'], record)).toBe(false);
    expect(set).toEqual(['--heap-growing-percent=50']);
  });
});
