// One exchange on undici's dispatch API, against real servers on ephemeral ports: the body caps, the
// deadline, the caller's signal at each stage, error bodies read or drained, 1xx, and UTF-8 across chunks.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Pool, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { BodyTooLargeError, DeadlinePassedError } from '../../src/upstream/errors.js';
import { exchange, type BodyPlan } from '../../src/upstream/exchange.js';

interface Upstream {
  pool: Pool;
  origin: string;
  /** Requests the server has seen, by path. */
  seen: string[];
  /** Sockets the server has accepted. */
  connections: number;
  /** Resolves when the response to `path` closes (finished or cut off), with whether it finished. */
  closed(path: string): Promise<boolean>;
}

const opened: { server: Server; pool: Pool }[] = [];
afterEach(async () => {
  for (const { server, pool } of opened.splice(0)) {
    await pool.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function upstream(handle: (req: IncomingMessage, res: ServerResponse) => void, connections = 4): Promise<Upstream> {
  const closings = new Map<string, Promise<boolean>>();
  const state: Upstream = {
    pool: undefined as unknown as Pool,
    origin: '',
    seen: [],
    connections: 0,
    closed: (path) => closings.get(path) ?? Promise.reject(new Error(`no request to ${path}`)),
  };
  const server = createServer((req, res) => {
    const path = req.url ?? '';
    state.seen.push(path);
    closings.set(path, new Promise((resolve) => res.on('close', () => resolve(res.writableFinished))));
    handle(req, res);
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.pool = new Pool(state.origin, { connections, keepAliveTimeout: 10_000 });
  opened.push({ server, pool: state.pool });
  return state;
}

/** Resolves once the server has received a request for `path` (a safety net of 10 s). */
async function seen(up: Upstream, path: string): Promise<void> {
  for (let waited = 0; !up.seen.includes(path); waited += 10) {
    if (waited > 10_000) throw new Error(`no request to ${path} within 10 s`);
    await sleep(10);
  }
}

/** Counts the listeners added to and removed from `signal`. */
function countListeners(signal: AbortSignal): { added: number; removed: number } {
  const counts = { added: 0, removed: 0 };
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<typeof add>) => {
    counts.added++;
    add(...args);
  };
  signal.removeEventListener = (...args: Parameters<typeof remove>) => {
    counts.removed++;
    remove(...args);
  };
  return counts;
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const READ: BodyPlan = { read: true, limit: 1_024 };
const get = (up: Upstream, path: string, plan: (status: number) => BodyPlan = () => READ, signal?: AbortSignal) =>
  exchange(up.pool, { origin: up.origin, path, method: 'GET', headersTimeout: 2_000, bodyTimeout: 2_000 }, plan, signal);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('exchange', () => {
  it('reads status, headers and a body that arrives in pieces, multi-byte characters split between them', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-remaining': '59' });
      const bytes = Buffer.from('{"name":"Zürich – 東京"}', 'utf8');
      // Cut inside "ü" and inside "東".
      const cuts = [bytes.indexOf(0xc3) + 1, bytes.indexOf(0xe6) + 2];
      res.write(bytes.subarray(0, cuts[0]));
      setTimeout(() => res.write(bytes.subarray(cuts[0], cuts[1])), 20);
      setTimeout(() => res.end(bytes.subarray(cuts[1])), 40);
    });
    const answer = await get(up, '/pieces');
    expect(answer).toMatchObject({ status: 200, text: '{"name":"Zürich – 東京"}', failure: null });
    expect(answer.headers['x-ratelimit-remaining']).toBe('59');
  });

  it('a declared length over the cap ends the exchange at the headers, before any of the body is sent', async () => {
    const up = await upstream((_req, res) => {
      // Headers only: the body would follow, but never does; the exchange must not wait for it.
      res.writeHead(200, { 'content-length': '10485760' });
      res.flushHeaders();
    });
    // Had it waited for the body, the exchange would end at its deadline, failed by that instead.
    const answer = await get(up, '/declared');
    expect(answer.status).toBe(200);
    expect(answer.text).toBeNull();
    expect(answer.failure).toBeInstanceOf(BodyTooLargeError);
    expect(await up.closed('/declared')).toBe(false); // the connection was closed on it
  });

  it('an undeclared body is cut off as soon as it passes the cap', async () => {
    let written = 0;
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no length to check up front
      const timer = setInterval(() => {
        res.write('x'.repeat(256));
        written += 256;
      }, 5);
      res.on('close', () => clearInterval(timer));
    });
    const answer = await get(up, '/chunked');
    expect(answer.failure).toBeInstanceOf(BodyTooLargeError);
    expect(answer.text).toBeNull();
    expect(await up.closed('/chunked')).toBe(false);
    expect(written).toBeLessThan(8 * 1_024);
  });

  it('a declared body still arriving at the deadline is stopped there', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-length': '400' });
      const timer = setInterval(() => res.write('x'.repeat(10)), 50); // all 400 bytes would take 2 s
      res.on('close', () => clearInterval(timer));
    });
    const started = Date.now();
    const answer = await get(up, '/slow', () => ({ read: true, limit: 1_024, deadline: started + 300 }));
    const took = Date.now() - started;
    expect(answer.failure).toBeInstanceOf(DeadlinePassedError);
    expect((answer.failure as DeadlinePassedError).code).toBe('UND_ERR_BODY_TIMEOUT');
    expect(took).toBeGreaterThanOrEqual(300); // not before it; not after it either, or the body (2 s) would be whole
  });

  it("a body broken off after the headers is the response's failure; the status stands", async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('{"data":');
      setTimeout(() => res.destroy(), 20);
    });
    const answer = await get(up, '/broken');
    expect(answer.status).toBe(200);
    expect(answer.text).toBeNull();
    expect(answer.failure).toBeInstanceOf(Error);
  });

  it('no response at all rejects', async () => {
    const up = await upstream((req) => req.socket.destroy());
    await expect(get(up, '/reset')).rejects.toBeInstanceOf(Error);
  });

  it('an error body is read when the plan says so (4xx), drained unread otherwise (5xx), the connection kept', async () => {
    const up = await upstream((req, res) => {
      const status = req.url === '/422' ? 422 : 500;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status === 422 ? '{"message":"The domain is taken."}' : '<html>SQLSTATE[42S02] secret</html>');
    }, 1);
    const plan = (status: number): BodyPlan => ({ read: status < 500, limit: 1_024 });
    expect(await get(up, '/422', plan)).toMatchObject({ status: 422, text: '{"message":"The domain is taken."}', failure: null });
    expect(await get(up, '/500', plan)).toMatchObject({ status: 500, text: null, failure: null });
    expect(await get(up, '/422', plan)).toMatchObject({ status: 422, failure: null });
    expect(up.connections).toBe(1); // drained bodies leave the socket reusable
  });

  it('an unread body over the cap is not drained: the connection is closed on it', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/html' });
      const timer = setInterval(() => res.write('<p>'.repeat(300)), 5);
      res.on('close', () => clearInterval(timer));
    });
    const answer = await get(up, '/endless', () => ({ read: false, limit: 2_048 }));
    expect(answer).toMatchObject({ status: 503, text: null, failure: null });
    expect(await up.closed('/endless')).toBe(false);
  });

  it('1xx answers are passed over for the final one', async () => {
    const up = await upstream((_req, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      }, 20);
    });
    expect(await get(up, '/hints')).toMatchObject({ status: 200, text: '{"ok":true}', failure: null });
  });

  describe("the caller's signal", () => {
    it('already aborted: nothing is sent', async () => {
      const up = await upstream((_req, res) => res.end('{}'));
      const reason = new Error('gone');
      await expect(get(up, '/never', undefined, AbortSignal.abort(reason))).rejects.toBe(reason);
      await sleep(50);
      expect(up.seen).toEqual([]);
    });

    it('aborted while waiting for the headers: rejects at once, the connection closed', async () => {
      const up = await upstream(() => undefined); // never answers
      const controller = new AbortController();
      const pending = get(up, '/waiting', undefined, controller.signal);
      await seen(up, '/waiting');
      const reason = new Error('client left');
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
      expect(await up.closed('/waiting')).toBe(false);
    });

    it('aborted while the body arrives: the body fails with the reason, the status stands', async () => {
      let written: Promise<void> = new Promise(() => undefined);
      const up = await upstream((_req, res) => {
        res.writeHead(200, { 'content-length': '100' });
        written = new Promise((resolve) => res.write('{"data":', () => resolve()));
      });
      const controller = new AbortController();
      const pending = get(up, '/half', undefined, controller.signal);
      await seen(up, '/half');
      // Out of the server's buffers: the client reads the headers at its next poll, before a timer's turn.
      await written;
      await sleep(50);
      const reason = new Error('client left');
      controller.abort(reason);
      const answer = await pending;
      expect(answer).toMatchObject({ status: 200, text: null });
      expect(answer.failure).toBe(reason);
      expect(await up.closed('/half')).toBe(false);
    });

    it('aborted while waiting in the pool for a connection: never sent', async () => {
      let answerFirst = (): void => undefined;
      const up = await upstream((req, res) => {
        if (req.url === '/first') answerFirst = () => res.end('{}');
        else res.end('{}');
      }, 1);
      const first = get(up, '/first');
      const controller = new AbortController();
      const queued = get(up, '/queued', undefined, controller.signal);
      // The only connection is held by /first until the test answers it: /queued waits in the pool.
      await seen(up, '/first');
      controller.abort(new Error('client left'));
      // undici settles an aborted request still in its queue when the connection comes free.
      answerFirst();
      await expect(queued).rejects.toThrow('client left');
      expect((await first).text).toBe('{}');
      await sleep(50);
      expect(up.seen).toEqual(['/first']);
    });

    it('a dispatcher that throws settles the exchange, which the signal lets go', async () => {
      const signal = new AbortController().signal;
      const broken = {
        dispatch() {
          throw new Error('no dispatcher here');
        },
      } as unknown as Dispatcher;
      const plans: WeakRef<object>[] = [];
      const failing = async (): Promise<void> => {
        const plan = (): BodyPlan => READ;
        plans.push(new WeakRef(plan));
        await exchange(broken, { origin: 'http://127.0.0.1:9', path: '/', method: 'GET' }, plan, signal);
      };
      const messages: string[] = [];
      for (let i = 0; i < 3; i++) await failing().catch((error: Error) => messages.push(error.message));
      expect(messages).toEqual(Array(3).fill('no dispatcher here'));
      await sleep(0); // a WeakRef's target is kept until the job that made it ends
      gc();
      // V8 may still hold the last call's closure of its own; the signal would hold all three.
      expect(plans.filter((plan) => plan.deref() !== undefined).length).toBeLessThanOrEqual(1);
    });

    it('one listener on a signal, however many exchanges it stops, and none of them held once over', async () => {
      const up = await upstream((_req, res) => res.end('{}'));
      const signal = new AbortController().signal;
      const counts = countListeners(signal);
      const plans: WeakRef<object>[] = [];
      for (let i = 0; i < 3; i++) {
        const plan = (): BodyPlan => READ;
        plans.push(new WeakRef(plan));
        await get(up, `/done-${i}`, plan, signal);
      }
      expect(counts).toEqual({ added: 1, removed: 0 });
      await sleep(0);
      gc();
      expect(plans.filter((plan) => plan.deref() !== undefined).length).toBeLessThanOrEqual(1);
    });
  });
});
