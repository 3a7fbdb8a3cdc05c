// Stream places against made-up keys (issue 45, finding 1): each made-up key opens as many streams as
// LIVE_MAX_STREAMS_PER_KEY lets it, in a way that would never meet a 401, and a real key then subscribes.
// This prints how many of the made-up keys' streams were still open once all had been opened (the places
// they held), how each was answered, what the real key's subscription got, and the upstream calls made.
//
//   npm run build && npm run build:bench && node dist-bench/bench/stream-places.js [--gateway dist/main.js]
//            [--keys 50] [--per-key 20] [--way skipped|budget]
//
// A gateway process (--gateway, as `npm start` runs it, its defaults: LIVE_MAX_STREAMS 1,000,
// LIVE_MAX_STREAMS_PER_KEY 20, LIVE_CALLS_PER_MIN 30) in front of an in-process sandbox. --way skipped:
// `subscription { website(id: "1") @skip(if: true) { id } }`, whose polls answer `{}` with no upstream
// call. --way budget: the key first spends its live budget (LIVE_CALLS_PER_MIN streams, one after
// another, each refused), then opens its streams on new documents, whose first polls wait for the next
// minute without a call. The keys open their streams together; each stream is read until it ends or
// the measure is over (1 s after the last one opened).
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startSandbox } from '../src/sandbox/index.js';
import { errorCode } from './attacks.js';
import { spawnServer } from './processes.js';

const SKIPPED = 'subscription { website(id: "1") @skip(if: true) { id } }';
/** LIVE_CALLS_PER_MIN's default: a key's polls of a minute. */
const CALLS_PER_MIN = 30;

interface Opened {
  /** Status and the first event's kind: `data`, an error code, or `no event`. */
  label: string;
  /** Resolves once the stream ended (or the measure is over). */
  ended: Promise<void>;
  open: () => boolean;
}

/** Opens one stream and reads its first event; it stays open until it ends or `signal` aborts. */
async function openStream(pool: Pool, authorization: string, query: string, signal: AbortSignal): Promise<Opened> {
  try {
    const response = await pool.request({
      path: '/graphql',
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization },
      body: JSON.stringify({ query }),
      signal,
    });
    let isOpen = true;
    const ended = new Promise<void>((resolve) =>
      response.body
        .once('close', () => {
          isOpen = false;
          resolve();
        })
        .once('error', () => resolve()),
    );
    // Its first event, past the comment the stream may open with.
    let first = '';
    const event = new Promise<void>((resolve) => {
      response.body.setEncoding('utf8').on('data', (chunk: string) => {
        if (!first.includes('data:')) first += chunk;
        if (first.includes('data:')) resolve();
      });
      void ended.then(resolve);
    });
    await event;
    const code = /"code":"([A-Z_]+)"/.exec(first)?.[1];
    return { label: `${response.statusCode} ${code ?? (first.includes('"data"') ? 'data' : 'no event')}`, ended, open: () => isOpen };
  } catch (error) {
    return { label: `no answer: ${errorCode(error)}`, ended: Promise.resolve(), open: () => false };
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      gateway: { type: 'string', default: 'dist/main.js' },
      keys: { type: 'string', default: '50' },
      'per-key': { type: 'string', default: '20' },
      way: { type: 'string', default: 'skipped' },
    },
  });
  const keys = Number(values.keys);
  const perKey = Number(values['per-key']);
  const way = values.way === 'budget' ? 'budget' : 'skipped';
  const sandbox = await startSandbox({ port: 0 });
  const gateway = await spawnServer({
    script: values.gateway,
    env: { HOST: '127.0.0.1', PORT: '0', UPSTREAM_URL: sandbox.url, LOG_LEVEL: 'silent', WORKERS: '1' },
    ready: /Gateway on (http:\/\/[^\s,]+)\/graphql/,
  });
  const pool = new Pool(gateway.url, { connections: keys * perKey + 16 });
  const ending = new AbortController();
  const answers = new Map<string, number>();
  const count = (label: string): void => void answers.set(label, (answers.get(label) ?? 0) + 1);
  try {
    const opened = (
      await Promise.all(
        Array.from({ length: keys }, async (_, k) => {
          const authorization = `Bearer made-up-${k}`;
          if (way === 'budget') {
            for (let n = 0; n < CALLS_PER_MIN; n++) {
              const spent = await openStream(pool, authorization, `subscription { spend${n}: website(id: "1") { id } }`, ending.signal);
              await spent.ended;
            }
          }
          const query = (n: number) => (way === 'skipped' ? SKIPPED : `subscription { held${n}: website(id: "1") { id } }`);
          return Promise.all(Array.from({ length: perKey }, (_, n) => openStream(pool, authorization, query(n), ending.signal)));
        }),
      )
    ).flat();
    for (const stream of opened) count(stream.label);
    await sleep(1_000);
    const held = opened.filter((stream) => stream.open()).length;
    const real = await openStream(pool, 'Bearer sandbox-key-1', 'subscription { website(id: "1") { id } }', ending.signal);
    process.stdout.write(
      `${JSON.stringify(
        {
          gateway: values.gateway,
          way,
          madeUpKeys: keys,
          streamsPerKey: perKey,
          madeUpStreamsOpenAtTheEnd: held,
          madeUpAnswers: Object.fromEntries([...answers].sort()),
          realKeySubscription: real.label,
          upstreamCalls: sandbox.log.count,
        },
        null,
        2,
      )}\n`,
    );
    ending.abort();
    await Promise.all([...opened, real].map((stream) => stream.ended));
  } finally {
    await pool.destroy();
    await gateway.stop();
    await sandbox.close();
  }
}

await main();
