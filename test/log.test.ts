// The gateway's log (src/log.ts) as a process writes it: lines gathered and written to stdout, a pipe
// read here. Every line arrives whole and in order, whether the process exits at once, lives on with a
// single line waiting (written within LOG_FLUSH_MS), or writes faster than its reader takes.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GatheredLines, LOG_WRITE_ALONE_BYTES, LOG_WRITE_SHARED_BYTES } from '../src/log.js';

const LOG = fileURLToPath(new URL('../dist/log.js', import.meta.url));

interface Child {
  /** What it wrote to stdout so far. */
  output(): string;
  exited: Promise<number | null>;
  kill(): void;
  pause(): void;
  resume(): void;
}

/** A node process running `body` with `stdoutLogger('info')` as `logger`, `stopLog` beside it. */
function run(body: string): Child {
  const script = `import { stdoutLogger } from ${JSON.stringify(LOG)};\nconst { logger, stopLog } = stdoutLogger('info');\n${body}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return {
    output: () => output,
    exited,
    kill: () => child.kill(),
    pause: () => child.stdout.pause(),
    resume: () => child.stdout.resume(),
  };
}

const linesOf = (output: string): { msg: string; n: number }[] =>
  output
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { msg: string; n: number });

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the log on stdout', () => {
  it('writes every line, in order, when the process exits right after logging them', async () => {
    // 100 lines: some written once 4 KB gathered, the rest still gathered at process.exit.
    const child = run(`for (let n = 0; n < 100; n++) logger.info({ n }, 'line'); process.exit(0);`);
    expect(await child.exited).toBe(0);
    const lines = linesOf(child.output());
    expect(lines.map((line) => line.n)).toEqual(Array.from({ length: 100 }, (_, n) => n));
  });

  it('writes a line left alone within the flush period, the process still running', async () => {
    const child = run(`logger.info({ n: 1 }, 'alone'); setInterval(() => undefined, 1000);`);
    try {
      await until(() => child.output().includes('"msg":"alone"'), 'the lone line');
      expect(linesOf(child.output())).toEqual([expect.objectContaining({ n: 1, msg: 'alone' })]);
    } finally {
      child.kill();
      await child.exited;
    }
  });

  it('loses nothing when it writes faster than its reader takes', async () => {
    // 20,000 lines in bursts of 100 a turn (several MB) while the reader stops now and then: the pipe
    // fills, writes wait and are retried.
    const child = run(
      `let n = 0; const burst = () => { for (let i = 0; i < 100; i++, n++) logger.info({ n }, 'burst'); if (n < 20000) setImmediate(burst); else { stopLog(); } }; burst();`,
    );
    const stutter = setInterval(() => {
      child.pause();
      setTimeout(() => child.resume(), 5);
    }, 10);
    try {
      expect(await child.exited).toBe(0);
    } finally {
      clearInterval(stutter);
    }
    const lines = linesOf(child.output());
    expect(lines).toHaveLength(20_000);
    expect(lines.every((line, i) => line.n === i && line.msg === 'burst')).toBe(true);
  });

  it('writes up to 16 KB at a time alone on its stdout, and a cluster worker up to PIPE_BUF (the workers share it)', () => {
    const folder = mkdtempSync(join(tmpdir(), 'gateway-log-'));
    try {
      const script = join(folder, 'sizes.mjs');
      writeFileSync(
        script,
        `import cluster from 'node:cluster';
import { stdoutLogger } from ${JSON.stringify(LOG)};
const { lines, stopLog } = stdoutLogger('info');
stopLog();
console.log((cluster.isWorker ? 'worker ' : 'alone ') + lines.maxBytes);
if (cluster.isPrimary) cluster.fork().once('exit', (code) => process.exit(code));
else process.exit(0);`,
      );
      const output = execFileSync(process.execPath, [script], { encoding: 'utf8', timeout: 20_000 });
      expect(output.split('\n').sort()).toEqual(['', `alone ${LOG_WRITE_ALONE_BYTES}`, `worker ${LOG_WRITE_SHARED_BYTES}`]);
      expect(LOG_WRITE_ALONE_BYTES).toBeGreaterThan(LOG_WRITE_SHARED_BYTES);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('calls back a flush of the logger', async () => {
    const child = run(`logger.info({ n: 7 }, 'flushed'); logger.flush(() => { stopLog(); });`);
    expect(await child.exited).toBe(0);
    expect(linesOf(child.output())).toEqual([expect.objectContaining({ n: 7, msg: 'flushed' })]);
  });
});

describe('GatheredLines', () => {
  it('writes lines whole, at most PIPE_BUF bytes at a time (a longer line alone), in order', () => {
    // With WORKERS every worker writes to one stdout: a pipe takes a write of up to PIPE_BUF (4096 bytes)
    // in one piece, so no other worker's write comes inside it. Lines not all ASCII: bytes, not characters.
    const writes: string[] = [];
    const out = { write: (text: string) => void writes.push(text), flush: () => undefined, flushSync: () => undefined };
    const gathered = new GatheredLines(out as unknown as ConstructorParameters<typeof GatheredLines>[0]);
    const sent: string[] = [];
    const long = `${JSON.stringify({ pad: 'y'.repeat(5_000) })}\n`;
    for (let n = 0; n < 2_000; n++) {
      const line = n === 1_000 ? long : `${JSON.stringify({ n, pad: 'é📈x'.repeat(n % 90) })}\n`;
      sent.push(line);
      gathered.write(line);
    }
    gathered.flush();
    expect(LOG_WRITE_SHARED_BYTES).toBe(4096);
    expect(writes.join('')).toBe(sent.join(''));
    expect(writes).toContain(long);
    for (const text of writes) {
      expect(text.endsWith('\n')).toBe(true);
      if (text !== long) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(LOG_WRITE_SHARED_BYTES);
    }
    // Gathered: a few lines a write.
    expect(writes.length).toBeLessThan(sent.length / 4);
  });
});
