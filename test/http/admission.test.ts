// Admission control over real HTTP: MAX_ACTIVE_REQUESTS at once, a bounded line in arrival order,
// 503 OVERLOADED beyond it, clients that leave the line never reach the upstream.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_1, metricOf, startStack, until as waitFor, type Stack } from '../fixture.js';

let stack: Stack;
afterEach(async () => {
  await stack.close();
});

const QUERY = '{ website(id: "1") { id domain } }';

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { data?: { website: { id: string } | null }; errors?: { message: string; extensions?: { code?: string } }[] };
  /** From the request's start. */
  at: number;
  /** performance.now() when the answer was read. */
  answeredAt: number;
}

function ask(signal?: AbortSignal, authorization: string | null = `Bearer ${KEY_1}`): Promise<Answer> {
  const started = performance.now();
  return fetch(stack.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization === null ? {} : { authorization }) },
    body: JSON.stringify({ query: QUERY }),
    ...(signal ? { signal } : {}),
  }).then(async (response) => ({
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: (await response.json()) as Answer['body'],
    at: performance.now() - started,
    answeredAt: performance.now(),
  }));
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean): Promise<void> {
  await waitFor('the condition', condition);
}

/** Until `count` requests wait in line (the metrics listener: METRICS_PORT=0 in the stack's env). */
const queued = (count: number): Promise<void> =>
  waitFor(`${count} waiting in line`, async () => (await metricOf(stack.gateway, 'gateway_requests_queued')) === count);

describe('admission control', () => {
  it('works on MAX_ACTIVE_REQUESTS at once; the others wait their turn and all get their answer', async () => {
    stack = await startStack({ env: { MAX_ACTIVE_REQUESTS: '2' }, sandbox: { latencyMs: 150 } });
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 6 }, () => ask()));
    const elapsed = performance.now() - started;
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers.every((answer) => answer.body.data?.website?.id === '1' && !answer.body.errors)).toBe(true);
    expect(stack.sandbox.log.count).toBe(6);
    expect(stack.sandbox.log.maxInFlight).toBe(2); // one upstream call per request, two requests at a time
    expect(elapsed).toBeGreaterThanOrEqual(3 * 145); // three waves
  });

  it('answers 503 OVERLOADED with Retry-After when the line is full, and never calls the upstream for it', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = { write: (chunk: string) => void lines.push(JSON.parse(chunk) as Record<string, unknown>) };
    stack = await startStack({
      env: { MAX_ACTIVE_REQUESTS: '1', MAX_QUEUED_REQUESTS: '1', METRICS_PORT: '0' },
      sandbox: { latencyMs: 20 },
      gateway: { logger: pino({ base: null }, sink) },
    });
    stack.sandbox.scriptFaults([{ kind: 'delay', ms: 2_000 }]); // the first holds the slot 2 s
    const first = ask();
    await until(() => stack.sandbox.log.inFlight === 1);
    const second = ask(); // waits in line
    await queued(1);
    const third = await ask(); // the line is full
    expect(third.status).toBe(503);
    expect(third.retryAfter).toBe('1');
    expect(third.body).toEqual({
      errors: [{ message: 'The gateway is busy; retry in a moment.', extensions: { code: 'OVERLOADED' } }],
      // Nothing ran, as every answer's extensions say.
      extensions: { cost: { requested: 0, limit: 100 }, upstreamCalls: 0, cache: { hits: 0, misses: 0, stale: 0 } },
    });
    // Turned away at once, not after a wait: while the first still held the slot.
    expect(stack.sandbox.log.inFlight).toBe(1);
    expect(stack.sandbox.log.count).toBe(1);
    expect((await first).status).toBe(200);
    expect((await second).body.data?.website?.id).toBe('1');
    expect(stack.sandbox.log.count).toBe(2);
    // Operators see the refusal in the log.
    expect(lines.filter((line) => line.msg === 'request refused: overloaded')).toEqual([
      expect.objectContaining({ level: 40, status: 503, reason: 'line full', active: 1, queued: 1 }),
    ]);
    // The line has room again.
    expect((await ask()).status).toBe(200);
  });

  it('drops a waiting request whose client went away: it never reaches the upstream nor keeps a slot', async () => {
    stack = await startStack({ env: { MAX_ACTIVE_REQUESTS: '1' }, sandbox: { latencyMs: 300 } });
    const first = ask();
    await until(() => stack.sandbox.log.inFlight === 1);
    const controller = new AbortController();
    const leaving = ask(controller.signal).catch((error: unknown) => error);
    await pause(50);
    controller.abort();
    expect(await leaving).toBeInstanceOf(Error);
    expect((await first).status).toBe(200);
    await pause(100);
    expect(stack.sandbox.log.count).toBe(1);
    // Both slots' worth of bookkeeping came back: the next two requests run one after the other.
    const [a, b] = await Promise.all([ask(), ask()]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(stack.sandbox.log.count).toBe(3);
    expect(stack.sandbox.log.maxInFlight).toBe(1);
  });

  it('turns away a request at its REQUEST_DEADLINE_MS in line, while the slot is still held', async () => {
    stack = await startStack({ env: { MAX_ACTIVE_REQUESTS: '1', REQUEST_DEADLINE_MS: '1200' } });
    // Each holds the slot for less than the deadline, so neither times out upstream.
    stack.sandbox.scriptFaults([
      { kind: 'delay', ms: 800 },
      { kind: 'delay', ms: 900 },
    ]);
    const first = ask(); // holds the slot until ~800 ms
    await until(() => stack.sandbox.log.inFlight === 1);
    const second = ask(); // waits ~800 ms, then holds the slot until ~1,700 ms (300 ms inside its deadline)
    await pause(50);
    const third = ask(); // still waiting at its deadline, ~1,250 ms: turned away then, not when the slot frees
    const [firstAnswer, secondAnswer, thirdAnswer] = await Promise.all([first, second, third]);
    expect(firstAnswer.body.data?.website?.id).toBe('1');
    expect(secondAnswer.body.data?.website?.id).toBe('1');
    expect(thirdAnswer.status).toBe(503);
    expect(thirdAnswer.retryAfter).toBe('1');
    expect(thirdAnswer.body.errors?.[0]?.extensions?.code).toBe('OVERLOADED');
    expect(thirdAnswer.at).toBeGreaterThanOrEqual(1_190);
    expect(thirdAnswer.answeredAt).toBeLessThan(secondAnswer.answeredAt);
    expect(stack.sandbox.log.count).toBe(2);
  });

  it('does not cut a request whose body came whole while it waits in line longer than REQUEST_RECEIVE_TIMEOUT_MS', async () => {
    stack = await startStack({
      env: { MAX_ACTIVE_REQUESTS: '1', REQUEST_RECEIVE_TIMEOUT_MS: '200', MAX_BODY_BYTES: String(1024 ** 2) },
      sandbox: { latencyMs: 900 },
    });
    const first = ask();
    await until(() => stack.sandbox.log.inFlight === 1);
    // Many socket reads long: a body left unread while waiting would stall (node stops reading the
    // socket), never be complete, and be cut.
    const padded = JSON.stringify({ query: QUERY }) + ' '.repeat(1_000_000);
    const waiting = await fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` },
      body: padded,
    });
    expect(waiting.status).toBe(200);
    expect(((await waiting.json()) as Answer['body']).data?.website?.id).toBe('1');
    expect((await first).status).toBe(200);
  });

  it('gives refusals the security headers, and CORS for an allowed origin so a browser app can read them', async () => {
    stack = await startStack({
      env: { MAX_ACTIVE_REQUESTS: '1', MAX_QUEUED_REQUESTS: '0', CORS_ORIGINS: 'https://app.example.com', MAX_BODY_BYTES: '1024' },
      sandbox: { latencyMs: 300 },
    });
    const first = ask();
    await until(() => stack.sandbox.log.inFlight === 1);
    const refused = (origin: string, body = JSON.stringify({ query: QUERY })) =>
      fetch(stack.endpoint, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` },
        body,
      });
    const allowed = await refused('https://app.example.com');
    expect(allowed.status).toBe(503);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(allowed.headers.get('access-control-expose-headers')?.split(', ')).toContain('retry-after');
    expect(allowed.headers.get('vary')).toBe('Origin');
    expect(allowed.headers.get('x-content-type-options')).toBe('nosniff');
    expect(allowed.headers.get('referrer-policy')).toBe('no-referrer');
    expect(((await allowed.json()) as Answer['body']).errors?.[0]?.extensions?.code).toBe('OVERLOADED');
    const other = await refused('https://evil.example');
    expect(other.status).toBe(503);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    await other.text();
    const tooLarge = await refused('https://app.example.com', JSON.stringify({ query: QUERY, padding: 'x'.repeat(2_000) }));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(tooLarge.headers.get('x-content-type-options')).toBe('nosniff');
    await tooLarge.text();
    expect((await first).status).toBe(200);
  });

  it('answers the health check at once even when every slot and the line are taken', async () => {
    stack = await startStack({ env: { MAX_ACTIVE_REQUESTS: '1', MAX_QUEUED_REQUESTS: '0' }, sandbox: { latencyMs: 20 } });
    stack.sandbox.scriptFaults([{ kind: 'delay', ms: 2_000 }]); // the first holds the slot 2 s
    const first = ask();
    await until(() => stack.sandbox.log.inFlight === 1);
    const health = await fetch(`${stack.gateway.url}/health`);
    expect(health.status).toBe(200);
    // At once: while the slot was still held, not once it came free.
    expect(stack.sandbox.log.inFlight).toBe(1);
    expect((await ask()).status).toBe(503);
    expect((await first).status).toBe(200);
  });

  it('serves keys the install accepted before strangers, giving strangers one slot in four while known requests wait', async () => {
    stack = await startStack({ env: { MAX_ACTIVE_REQUESTS: '1', METRICS_PORT: '0' }, sandbox: { latencyMs: 20 } });
    // KEY_1's first answer makes it known; a key never sent, or none, is a stranger's.
    expect((await ask()).body.data?.website?.id).toBe('1');
    // The slot is held for 3 s: every other request below is in line, in its order, before it frees.
    stack.sandbox.scriptFaults([{ kind: 'delay', ms: 3_000 }]);
    const holding = ask();
    await until(() => stack.sandbox.log.inFlight === 1);
    const order: string[] = [];
    const tagged = (name: string, answer: Promise<Answer>) =>
      answer.then((answered) => {
        order.push(name);
        return answered;
      });
    const strangers: Promise<Answer>[] = [];
    for (const name of ['s1', 's2', 's3']) {
      strangers.push(tagged(name, ask(undefined, null)));
      await queued(strangers.length);
    }
    const known: Promise<Answer>[] = [];
    for (const name of ['k1', 'k2', 'k3', 'k4', 'k5']) {
      known.push(tagged(name, ask()));
      await queued(strangers.length + known.length);
    }
    expect(stack.sandbox.log.inFlight).toBe(1); // still held: the order below is the line's
    expect((await holding).status).toBe(200);
    const answers = await Promise.all([...strangers, ...known]);
    // Three known, the first stranger (its turn), two known, then the other strangers.
    expect(order).toEqual(['k1', 'k2', 'k3', 's1', 'k4', 'k5', 's2', 's3']);
    for (const answer of answers.slice(0, 3)) expect(answer.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    for (const answer of answers.slice(3)) expect(answer.body.data?.website?.id).toBe('1');
  });

  it('turns away the stranger who came last, not a known request, when the line is full', async () => {
    stack = await startStack({
      env: { MAX_ACTIVE_REQUESTS: '1', MAX_QUEUED_REQUESTS: '2', METRICS_PORT: '0' },
      sandbox: { latencyMs: 20 },
    });
    expect((await ask()).status).toBe(200);
    stack.sandbox.scriptFaults([{ kind: 'delay', ms: 3_000 }]);
    const holding = ask();
    await until(() => stack.sandbox.log.inFlight === 1);
    const first = ask(undefined, 'Bearer not-a-key-yet');
    await queued(1);
    const last = ask(undefined, null);
    await queued(2);
    // A stranger finds the line full: turned away itself.
    const late = await ask(undefined, null);
    expect(late.status).toBe(503);
    // A known request finds it full: the last stranger goes, it waits and is answered.
    const known = ask();
    const turnedAway = await last;
    expect(turnedAway.status).toBe(503);
    expect(turnedAway.body.errors?.[0]?.extensions?.code).toBe('OVERLOADED');
    expect(stack.sandbox.log.inFlight).toBe(1); // all of it while the slot was held
    expect((await known).body.data?.website?.id).toBe('1');
    expect((await holding).status).toBe(200);
    expect((await first).status).toBe(200);
  });
});
