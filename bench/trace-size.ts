// What a trace costs when a request makes it as large as it can within every limit: one alias of 60 KB
// (a body under MAX_BODY_BYTES) over nodes(ids:) naming website 1 48 times, each with its page statistic
// (cost 97), so that one read is needed by 48 response paths each as long as the alias. A gateway process
// on its embedded sandbox; 4 clients send 25 such requests each, traced or not; the size of one answer and
// the process's peak resident memory (VmHWM) are printed.
//   npm run build && npm run build:bench && node dist-bench/bench/trace-size.js [traced|untraced] [path/to/dist/main.js]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './processes.js';

const traced = process.argv[2] !== 'untraced';
const main = process.argv[3] ?? join(PROJECT_ROOT, 'dist', 'main.js');
const CLIENTS = 4;
const REQUESTS_EACH = 25;

const child = spawn(process.execPath, [main], {
  env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'silent', CACHE: 'off' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let printed = '';
const base = await new Promise<string>((resolve, reject) => {
  child.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before it listened:\n${printed}`)));
  child.stdout?.on('data', (chunk: Buffer) => {
    printed += chunk.toString();
    const listening = /Gateway on (http:\/\/\S+)\/graphql/.exec(printed);
    if (listening?.[1]) resolve(listening[1]);
  });
});
const ids = `[${Array.from({ length: 48 }, () => '"1"').join(',')}]`;
const query = `{ a${'x'.repeat(60_000)}: nodes(ids: ${ids}) { id ... on Website { pages: stats(name: PAGE, period: LAST_30_DAYS) { totalCount } } } }`;
const headers = {
  'content-type': 'application/json',
  authorization: 'Bearer sandbox-key-1',
  ...(traced ? { 'x-gateway-trace': '1' } : {}),
};

async function ask(): Promise<number> {
  const response = await fetch(`${base}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query }) });
  if (response.status !== 200) throw new Error(`answered ${response.status}: ${await response.text()}`);
  return (await response.arrayBuffer()).byteLength;
}

try {
  const bytes = await ask();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = 0; i < REQUESTS_EACH; i++) await ask();
    }),
  );
  const peakKiB = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]);
  console.log(`${traced ? 'traced' : 'untraced'}: an answer of ${bytes} bytes; peak RSS ${Math.round(peakKiB / 1024)} MiB`);
} finally {
  child.kill('SIGKILL');
}
