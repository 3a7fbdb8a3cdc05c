// The SSE flood (issue 38): strangers open event streams as fast as they can, keyless and with made-up
// keys, and `/health` must stay answered meanwhile (under 200 ms at its worst). This prints `/health`'s
// latency before the flood (the control) and during it, and how the streams were answered.
//
//   npm run build && npm run build:bench && node dist-bench/bench/sse-flood.js [--gateway dist/main.js]
//            [--keyless 300] [--made-up 200] [--over-ms 3500] [--probe-every-ms 20]
//
// A gateway process (--gateway, as `npm start` runs it, defaults otherwise) in front of an in-process
// sandbox (20 ms). --keyless streams with no Authorization and --made-up streams each with a key of its
// own that the install refuses, interleaved and spread evenly over --over-ms, each a POST of a
// subscription with `Accept: text/event-stream` whose answer is read until it ends or the flood is over
// (1 s after the last one opened). One `/health` at a time, every --probe-every-ms, on a connection of
// its own: 2 s before the flood, then through it.
import { setTimeout as sleep } from 'node:timers/promises';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Client, Pool } from 'undici';
import { startSandbox } from '../src/sandbox/index.js';
import { distribution, errorCode } from './attacks.js';
import { spawnServer } from './processes.js';

const SUBSCRIPTION = JSON.stringify({
  query: 'subscription { website(id: "1") { id visitors: series(metric: VISITORS, period: TODAY) { total } } }',
});

/** `/health` one at a time until `until` resolves: each latency in ms. */
async function probeHealth(client: Client, everyMs: number, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.then(() => {
    done = true;
  });
  const latencies: number[] = [];
  while (!done) {
    const startedAt = performance.now();
    const response = await client.request({ path: '/health', method: 'GET' });
    await response.body.text();
    latencies.push(performance.now() - startedAt);
    await sleep(everyMs);
  }
  return latencies;
}

/** One stream: its status and its first event's kind, read until it ends or `signal` aborts. */
async function openStream(pool: Pool, authorization: string | null, signal: AbortSignal): Promise<string> {
  try {
    const response = await pool.request({
      path: '/graphql',
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(authorization ? { authorization } : {}) },
      body: SUBSCRIPTION,
      signal,
    });
    // Its first event, past the comment the stream may open with.
    let first = '';
    response.body.setEncoding('utf8').on('data', (chunk: string) => {
      if (!first.includes('data:')) first += chunk;
    });
    await new Promise<void>((resolve) => response.body.once('close', resolve).once('error', () => resolve()));
    const code = /"code":"([A-Z_]+)"/.exec(first)?.[1];
    return `${response.statusCode} ${code ?? (first.includes('"data"') ? 'data' : 'no event')}`;
  } catch (error) {
    return signal.aborted ? 'open at the end' : `no answer: ${errorCode(error)}`;
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      gateway: { type: 'string', default: 'dist/main.js' },
      keyless: { type: 'string', default: '300' },
      'made-up': { type: 'string', default: '200' },
      'over-ms': { type: 'string', default: '3500' },
      'probe-every-ms': { type: 'string', default: '20' },
    },
  });
  const keyless = Number(values.keyless);
  const madeUp = Number(values['made-up']);
  const overMs = Number(values['over-ms']);
  const probeEveryMs = Number(values['probe-every-ms']);
  const sandbox = await startSandbox({ port: 0, latencyMs: 20 });
  const gateway = await spawnServer({
    script: values.gateway,
    env: { HOST: '127.0.0.1', PORT: '0', UPSTREAM_URL: sandbox.url, LOG_LEVEL: 'silent', WORKERS: '1' },
    ready: /Gateway on (http:\/\/[^\s,]+)\/graphql/,
  });
  const probe = new Client(gateway.url);
  const pool = new Pool(gateway.url, { connections: keyless + madeUp });
  const loadBefore = loadavg();
  try {
    const control = await probeHealth(probe, probeEveryMs, sleep(2_000));
    const ending = new AbortController();
    const total = keyless + madeUp;
    const answers = new Map<string, number>();
    const flood = (async () => {
      const streams: Promise<void>[] = [];
      const startedAt = performance.now();
      for (let i = 0; i < total; i++) {
        // Interleaved: as many keyless streams between two made-up keys as their numbers say.
        const authorization = Math.floor(((i + 1) * madeUp) / total) > Math.floor((i * madeUp) / total) ? `Bearer made-up-${i}` : null;
        const kind = authorization ? 'made-up key' : 'keyless';
        streams.push(
          openStream(pool, authorization, ending.signal).then((label) => {
            const name = `${kind}: ${label}`;
            answers.set(name, (answers.get(name) ?? 0) + 1);
          }),
        );
        const due = startedAt + ((i + 1) * overMs) / total;
        await sleep(Math.max(0, due - performance.now()));
      }
      await sleep(1_000);
      ending.abort();
      await Promise.all(streams);
    })();
    const during = await probeHealth(probe, probeEveryMs, flood);
    await flood;
    process.stdout.write(
      `${JSON.stringify(
        {
          gateway: values.gateway,
          streams: { keyless, madeUp, overMs },
          healthMs: { before: distribution(control), during: distribution(during) },
          answers: Object.fromEntries([...answers].sort()),
          loadAverage: {
            before: loadBefore.map((load) => Math.round(load * 100) / 100),
            after: loadavg().map((load) => Math.round(load * 100) / 100),
          },
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await probe.close();
    await pool.destroy();
    await gateway.stop();
    await sandbox.close();
  }
}

await main();
