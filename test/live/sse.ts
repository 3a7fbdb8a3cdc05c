// A minimal reader of GraphQL over SSE (distinct connections) for the live suites: it opens the stream
// with fetch, as a browser's EventSource-less client does, and hands out each `next` event's payload.
import type { GraphQLResponse } from '../fixture.js';

export interface SseStream<T> {
  response: Response;
  /** The next event's payload; null once the stream completed or closed. */
  next(timeoutMs?: number): Promise<Omit<GraphQLResponse<T>, 'status' | 'headers'> | null>;
  /** Leaves the stream (the client goes away). */
  close(): void;
}

export async function openSubscription<T>(
  endpoint: string,
  body: { query: string; variables?: Record<string, unknown> },
  key: string | null,
): Promise<SseStream<T>> {
  const abort = new AbortController();
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'accept-encoding': 'gzip, br',
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
    signal: abort.signal,
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let done = false;
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
          if (event === null || event.event === 'complete') return null;
          if (event.event === 'next' || event.event === 'message')
            return JSON.parse(event.data) as Omit<GraphQLResponse<T>, 'status' | 'headers'>;
        }
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => abort.abort(),
  };
}
