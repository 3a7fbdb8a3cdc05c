// Subscriptions across gateways on one Redis (REDIS_URL), over real HTTP against the sandbox and a
// real redis-server: one poller per topic among them, every gateway's streams pushed by it, a gateway
// that joins answered at once from the last result kept in Redis, a holder that dies replaced (a real
// gateway process, SIGKILLed), and a Redis that cannot be reached leaving each gateway to poll alone.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { KEY_1, testConfig, until } from '../fixture.js';
import { freePort } from '../ports.js';
import { describe, useRedis } from '../redis.js';
import { openSubscription, type SseStream } from './sse.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

interface LiveWebsite {
  website: { id: string; today: { nodes: { count: number }[] } };
}

const LIVE_DASHBOARD = `subscription Live($id: ID!) {
  website(id: $id) { id today: stats(name: VISITOR, period: TODAY) { nodes { count } } }
}`;

const redis = useRedis();
// The sandbox's today is the real one: a gateway process (whose clock is the real one) reads the same
// day. Today's figures stay at the full day's (liveToday: false): only the traffic the tests add moves them.
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, liveToday: false });
});
afterAll(() => sandbox?.close());
beforeEach(() => sandbox.log.reset());

const gateways: Gateway[] = [];
const streams: SseStream<LiveWebsite>[] = [];
const processes: ChildProcess[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  for (const child of processes.splice(0)) child.kill('SIGKILL');
  await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function gatewayOn(redisUrl: string, env: Record<string, string>): Promise<Gateway> {
  const gateway = await createGateway(testConfig(sandbox.url, { REDIS_URL: redisUrl, ...env }));
  gateways.push(gateway);
  return gateway;
}

async function watch(gateway: { url: string }, id: string): Promise<SseStream<LiveWebsite>> {
  const stream = await openSubscription<LiveWebsite>(`${gateway.url}/graphql`, { query: LIVE_DASHBOARD, variables: { id } }, KEY_1);
  streams.push(stream);
  return stream;
}

const visitorsOf = (event: Awaited<ReturnType<SseStream<LiveWebsite>['next']>>): number => event?.data?.website.today.nodes[0]?.count ?? -1;

async function addVisitors(websiteId: number, visitors: number): Promise<void> {
  const added = await fetch(`${sandbox.url}/__sandbox/traffic`, { method: 'POST', body: JSON.stringify({ websiteId, visitors }) });
  expect(added.status).toBe(204);
}

/**
 * Waits for `count` polls of website `id` (from now) and checks they came from one poller: polls are
 * timed start to start a period apart (1 s here), and a busy machine only spaces them more, so `count`
 * polls span at least `count - 1` periods, less a second for the requests' own delays. A poller on each
 * of two gateways would make them twice as fast.
 */
async function expectOnePoller(id: string, count: number): Promise<void> {
  sandbox.log.reset();
  const polls = () => sandbox.log.entries.filter((entry) => entry.path === `/api/v1/websites/${id}`).map((entry) => entry.startedAt);
  await until(`${count} polls of website ${id}`, () => polls().length >= count, 60_000);
  const starts = polls();
  expect((starts[count - 1] ?? 0) - (starts[0] ?? 0)).toBeGreaterThan((count - 1) * 1_000 - 1_000);
}

/** The next event whose visitors differ from `before` (events of the same figure are skipped). */
async function nextChange(stream: SseStream<LiveWebsite>, before: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`no change from ${before} within ${timeoutMs} ms`);
    const visitors = visitorsOf(await stream.next(left));
    if (visitors !== before) return visitors;
  }
}

describe('subscriptions across gateways on one Redis', () => {
  it("poll a topic once among them, and push each change to every gateway's streams", { timeout: 90_000 }, async () => {
    const env = { LIVE_INTERVAL_S: '1', LIVE_CALLS_PER_MIN: '600' };
    const [a, b] = [await gatewayOn(redis.url, env), await gatewayOn(redis.url, env)];
    const onA = await watch(a, '1');
    const first = visitorsOf(await onA.next());
    const onB = await watch(b, '1');
    expect(visitorsOf(await onB.next())).toBe(first);
    await expectOnePoller('1', 6);
    await addVisitors(1, 5);
    expect(await nextChange(onA, first, 30_000)).toBe(first + 5);
    expect(await nextChange(onB, first, 30_000)).toBe(first + 5);
  });

  it('answer a stream that joins on another gateway at once from the last result in Redis, with no upstream call', async () => {
    // With the read cache on Redis, gateway B finds the key accepted by A (its `seen` mark): it proves
    // the stream's key with no call of its own.
    const env = { LIVE_INTERVAL_S: '60', CACHE: 'on' };
    const [a, b] = [await gatewayOn(redis.url, env), await gatewayOn(redis.url, env)];
    const onA = await watch(a, '2');
    const first = await onA.next();
    expect(first?.data?.website.id).toBe('2');
    sandbox.log.reset();
    const onB = await watch(b, '2');
    expect(await onB.next(2_000)).toEqual(first);
    await sleep(200);
    expect(sandbox.log.entries).toEqual([]);
  });

  it('hand a topic to another gateway when its poller dies (a gateway process, SIGKILLed)', { timeout: 120_000 }, async () => {
    const env = { LIVE_INTERVAL_S: '1', LIVE_CALLS_PER_MIN: '600' };
    const child = spawn(process.execPath, [MAIN], {
      env: { PATH: process.env.PATH, PORT: '0', UPSTREAM_URL: sandbox.url, REDIS_URL: redis.url, CACHE: 'off', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    processes.push(child);
    let output = '';
    child.stderr?.on('data', (chunk) => (output += chunk));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout?.on('data', (chunk) => {
        output += chunk;
        const found = /Gateway on (http:\/\/[^/\s]+)/.exec(output);
        if (found?.[1]) resolve(found[1]);
      });
      child.once('exit', () => reject(new Error(`the gateway exited:\n${output}`)));
    });
    // The process polls the topic (its stream came first); the in-process gateway's stream rides on it.
    const onProcess = await watch({ url }, '5');
    const first = visitorsOf(await onProcess.next());
    expect(first).toBeGreaterThanOrEqual(0);
    const survivor = await gatewayOn(redis.url, env);
    const onSurvivor = await watch(survivor, '5');
    expect(visitorsOf(await onSurvivor.next())).toBe(first);
    await expectOnePoller('5', 4);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    await addVisitors(5, 4);
    // Its lock runs out (the wait before its next poll plus 10 s at most): the survivor takes the topic.
    // The wait is the safety net only; the event is the survivor's push.
    expect(await nextChange(onSurvivor, first, 45_000)).toBe(first + 4);
  });

  it('poll for their own streams while Redis cannot be reached', async () => {
    const gateway = await gatewayOn(`redis://127.0.0.1:${await freePort()}`, { LIVE_INTERVAL_S: '1', LIVE_CALLS_PER_MIN: '600' });
    const stream = await watch(gateway, '4');
    const first = visitorsOf(await stream.next());
    expect(first).toBeGreaterThanOrEqual(0);
    await addVisitors(4, 2);
    expect(await nextChange(stream, first, 30_000)).toBe(first + 2);
  });
});
