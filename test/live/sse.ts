// A minimal reader of GraphQL over SSE (distinct connections) for the live suites: it opens the stream
// with fetch, as a browser's EventSource-less client does, and hands out each `next` event's payload,
// and says how the stream ended: with the protocol's `complete` (a graphql-sse client stops for good) or
// with its connection closed (a network error to a graphql-sse client, which subscribes again).
import type { GraphQLResponse } from '../fixture.js';

export interface SseStream<T> {
  response: Response;
  /** The next event's payload; null once the stream completed or closed (endedBy says which). */
  next(timeoutMs?: number): Promise<Omit<GraphQLResponse<T>, 'status' | 'headers'> | null>;
  /** How the stream ended, once next() answered null: `complete`, or `closed` (the connection, without `complete`). */
  readonly endedBy: 'complete' | 'closed' | null;
  /** Leaves the stream (the client goes away). */
  close(): void;
}

export async function openSubscription<T>(
  endpoint: string,
  body: { query?: string; variables?: Record<string, unknown>; extensions?: Record<string, unknown> },
  key: string | null,
  /** The Authorization header as sent, instead of `Bearer <key>`. */
  authorization?: string,
): Promise<SseStream<T>> {
  const abort = new AbortController();
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'accept-encoding': 'gzip, br',
      ...(authorization !== undefined ? { authorization } : key === null ? {} : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
    signal: abort.signal,
  });
  // Taken at the first next(): until then the body can be read otherwise (a refusal's JSON).
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const decoder = new TextDecoder();
  let buffer = '';
  let done = false;
  let endedBy: 'complete' | 'closed' | null = null;
  let inFlight: Promise<{ event: string; data: string } | null> | null = null;
  const readEvent = async (): Promise<{ event: string; data: string } | null> => {
    while (true) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split('\n').filter((line) => !line.startsWith(':'));
        if (lines.length === 0) continue; // a heartbeat
        const event =
          lines
            .find((line) => line.startsWith('event:'))
            ?.slice(6)
            .trim() ?? 'message';
        const data = lines
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        return { event, data };
      }
      if (done) return null;
      reader ??= (response.body as ReadableStream<Uint8Array>).getReader();
      const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (chunk.done) done = true;
      else buffer += decoder.decode(chunk.value, { stream: true });
    }
  };
  return {
    response,
    async next(timeoutMs = 10_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        while (true) {
          // An event read when an earlier next() timed out is this call's: it is not lost.
          inFlight ??= readEvent();
          const event = await Promise.race([inFlight, timeout]);
          inFlight = null;
          if (event === null || event.event === 'complete') {
            endedBy ??= event === null ? 'closed' : 'complete';
            return null;
          }
          if (event.event === 'next' || event.event === 'message')
            return JSON.parse(event.data) as Omit<GraphQLResponse<T>, 'status' | 'headers'>;
        }
      } finally {
        clearTimeout(timer);
      }
    },
    get endedBy() {
      return endedBy;
    },
    close: () => abort.abort(),
  };
}
