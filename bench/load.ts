// Load generators: autocannon against the gateway, and N looping workers for the REST baselines.
// Both keep every latency sample as a float (autocannon's own histogram has 1 ms resolution, too
// coarse for the gateway's overhead), and both end with nothing in flight when asked to.
import autocannon from 'autocannon';
import type { ChainContext, GraphqlStep } from './scenarios.js';

export interface LoadResult {
  /** Responses (GraphQL requests) or request equivalents (REST baselines) completed. */
  completed: number;
  /** Failures: transport errors, non-2xx, GraphQL errors in a body. */
  errors: number;
  /** Milliseconds per successful request. */
  latencies: number[];
  /** Wall time of the run. */
  seconds: number;
  /** Completed per second over the second half of the run (to size a run by `amount`). */
  lateRate: number;
  /**
   * Gateway only: the sum of `extensions.upstreamCalls` of the responses (calls made, retries not counted);
   * null when no response carried it (the floor gateway, a static server).
   */
  reportedCalls: number | null;
  /** Gateway only: how many responses reported each number of calls (`{ "7": 120 }`); null as reportedCalls. */
  answersByCalls: Record<string, number> | null;
}

export interface GatewayLoadOptions {
  /** The GraphQL endpoint. */
  url: string;
  authorization: string;
  /** Each request's Authorization instead (many keys, e.g. one after another): its steps must not be dynamic. */
  authorizationOf?: () => string;
  connections: number;
  steps: readonly GraphqlStep[];
  ok(body: string): boolean;
  /** Run for this long (requests cut off at the end are dropped)… */
  seconds?: number;
  /** …or until exactly this many requests have completed (none left in flight). */
  amount?: number;
}

/**
 * The size of a run that lasts about `seconds` at the warm-up's rate, in whole chains of `chain` requests
 * per connection, and of at least `minimum` requests: a short warm-up on a busy machine may have seen few
 * answers, or none in its second half (its whole rate then), and a run by time might complete none.
 */
export function sizedAmount(warmup: LoadResult, connections: number, chain: number, seconds: number, minimum: number): number {
  const rate = Math.max(warmup.lateRate, warmup.seconds > 0 ? warmup.completed / warmup.seconds : 0);
  const perConnection = Math.max(Math.ceil(minimum / connections / chain), Math.ceil((rate * seconds) / connections / chain)) * chain;
  return perConnection * connections;
}

/** autocannon's sample interval (ms): how late after its end a run is noticed as over. */
const SAMPLE_MS = 100;

export function runGatewayLoad(options: GatewayLoadOptions): Promise<LoadResult> {
  const headers = { 'content-type': 'application/json', authorization: options.authorization };
  const requests = options.steps.map((step): autocannon.RequestDefinition => {
    const request: autocannon.RequestDefinition = { method: 'POST', path: new URL(options.url).pathname, headers };
    if (step.dynamic) {
      request.setupRequest = (current, context) => {
        const body = step.body(context as ChainContext);
        return body === null ? null : { ...current, body };
      };
    } else {
      request.body = step.body({}) ?? '';
      const { authorizationOf } = options;
      if (authorizationOf) request.setupRequest = (current) => ({ ...current, headers: { ...headers, authorization: authorizationOf() } });
    }
    if (step.after) {
      const after = step.after;
      request.onResponse = (status, body, context) => {
        if (status !== 200) return;
        try {
          after(JSON.parse(body) as unknown, context as ChainContext);
        } catch {
          // Not JSON: the next step sees no value and the chain restarts.
        }
      };
    }
    return request;
  });

  const latencies: number[] = [];
  const responseTimes: number[] = [];
  let reportedCalls = 0;
  let reporting = false;
  const answersByCalls: Record<string, number> = {};
  const verify = (body: string): boolean => {
    // `…,"upstreamCalls":7}}` closes every response: read it without parsing the body.
    const at = body.lastIndexOf('"upstreamCalls":');
    if (at >= 0) {
      reporting = true;
      const calls = Number.parseInt(body.slice(at + 16), 10) || 0;
      reportedCalls += calls;
      answersByCalls[calls] = (answersByCalls[calls] ?? 0) + 1;
    }
    return options.ok(body);
  };
  const started = performance.now();
  return new Promise<LoadResult>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        ...(options.amount === undefined ? { duration: options.seconds ?? 10 } : { amount: options.amount }),
        timeout: 30,
        // autocannon ends a run (by duration, or once `amount` have completed) only at its next sample,
        // every sampleInt ms: 1 s by default, which added up to a second of idle time to every run.
        sampleInt: SAMPLE_MS,
        requests,
        verifyBody: verify,
      },
      (error, result) => {
        if (error) return reject(error);
        // By amount, the run is over with its last answer (the rest is waiting for the next sample).
        const ended = options.amount === undefined ? performance.now() : (responseTimes.at(-1) ?? performance.now());
        const seconds = (ended - started) / 1000;
        const half = started + (seconds * 1000) / 2;
        const late = responseTimes.filter((at) => at >= half).length;
        resolve({
          completed: responseTimes.length,
          errors: result.errors + result.non2xx + result.mismatches,
          latencies,
          seconds,
          lateRate: late / (seconds / 2),
          reportedCalls: reporting ? reportedCalls : null,
          answersByCalls: reporting ? answersByCalls : null,
        });
      },
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      responseTimes.push(performance.now());
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

export interface RestLoadOptions {
  connections: number;
  seconds: number;
  /** One page: resolves when done, calling record(ms) once per request equivalent. */
  iterate(record: (ms: number) => void): Promise<void>;
}

/** `connections` workers, each looping over pages until the time is up; a page once started is finished. */
export async function runRestLoad(options: RestLoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  const times: number[] = [];
  let errors = 0;
  const started = performance.now();
  const end = started + options.seconds * 1000;
  const record = (ms: number): void => {
    latencies.push(ms);
    times.push(performance.now());
  };
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      try {
        await options.iterate(record);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  const half = started + (seconds * 1000) / 2;
  return {
    completed: latencies.length,
    errors,
    latencies,
    seconds,
    lateRate: times.filter((at) => at >= half).length / (seconds / 2),
    reportedCalls: null,
    answersByCalls: null,
  };
}
