// The part of autocannon@8's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    type Context = Record<string, unknown>;

    interface RequestDefinition {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      /** Returns the request to send, or a falsy value to restart from the first request. */
      setupRequest?: (request: RequestDefinition, context: Context) => RequestDefinition | null | undefined;
      onResponse?: (status: number, body: string, context: Context, headers: Record<string, unknown>) => void;
    }

    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Requests in all, overriding duration; each connection sends amount / connections. */
      amount?: number;
      /** Seconds. */
      timeout?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      requests?: RequestDefinition[];
      verifyBody?: (body: string) => boolean;
      excludeErrorStats?: boolean;
      /** Milliseconds between samples (default 1000); a run is seen as over at the next one. */
      sampleInt?: number;
    }

    interface Histogram {
      average: number;
      p50: number;
      p90: number;
      p99: number;
      max: number;
    }

    interface Result {
      duration: number;
      /** total: responses received; sent: requests sent. */
      requests: { total: number; sent: number };
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      latency: Histogram;
      statusCodeStats: Record<string, { count: number }>;
    }

    interface Instance extends EventEmitter {
      stop(): void;
    }
  }

  function autocannon(
    options: autocannon.Options,
    callback?: (error: Error | null, result: autocannon.Result) => void,
  ): autocannon.Instance;

  export = autocannon;
}
