// The gateway as its users run it: the built entry point (dist/main.js, or dist/bin.js) as a real
// process, with only the environment given (and PATH), its stdout and stderr gathered as they come.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

export interface GatewayProcess {
  child: ChildProcess;
  /** Everything printed so far, stdout and stderr together. */
  output: () => string;
  exited: Promise<number | null>;
}

export function startGatewayProcess(env: Record<string, string>, entry = MAIN): GatewayProcess {
  const proc = spawn(process.execPath, [entry], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const { stdout, stderr } = proc;
  if (stdout === null || stderr === null) throw new Error('spawned without piped stdout and stderr');
  let output = '';
  stdout.on('data', (chunk) => (output += chunk));
  stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
  return { child: proc, output: () => output, exited };
}

/** Waits (up to 10 s) for `pattern` in what the process printed. */
export async function waitFor(output: () => string, pattern: RegExp): Promise<RegExpExecArray> {
  for (let i = 0; i < 200; i++) {
    const match = pattern.exec(output());
    if (match) return match;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${pattern}; output so far:\n${output()}`);
}
