// What an answer is, whichever path made it (a stored answer, a known operation, yoga): plain data that
// the HTTP layer's ending (http/answer.ts) sends, with the headers, the stored answer, the count and the
// log line it makes for every answer alike.

/** What the request's reads and calls did: the figures of `extensions`, the log line and Cache-Control. */
export interface AnswerUsage {
  upstreamCalls: number;
  cost: number | null;
  cache: { hits: number; misses: number; stale: number; freshForS: number | null };
}

/** What the ending needs to know of a GraphQL answer besides its bytes. */
export interface AnswerFacts {
  /** The operation as the log names it: the request's operationName, or the document's own name. */
  operation: string | null;
  /** The document's own operation name (the metrics' label: never the client's text); undefined when anonymous. */
  documentName: string | undefined;
  type: 'query' | 'mutation' | 'subscription' | 'unknown';
  /** The code of each of the answer's errors, in order (GRAPHQL_ERROR for one without). */
  errorCodes: readonly string[];
  /** None when nothing ran (refused before execution). */
  usage: AnswerUsage | null;
  /** The upstream accepted the request's key (it answered a call made with it, or its mark said so lately). */
  keyAccepted: boolean;
  /** The request's OpenTelemetry trace id, when tracing is on. */
  traceId?: string;
}

/** A GraphQL answer as JSON, its text made once by the path that answered. */
export interface JsonAnswer {
  status: number;
  /** application/json or application/graphql-response+json. */
  contentType: string;
  body: string | Uint8Array;
  /** The data's JSON, for a query's answer without errors: its ETag and its stored form are made of it. */
  data: string | null;
  facts: AnswerFacts;
  /** Headers of its own besides its type (yoga's: a 405's Allow), name then value. */
  headers?: string[];
  /** The ETag of its data, once the ending made it (a GET's). */
  etag?: string;
  /** Sent from its stored answer: the ETag it had, and how long it stays fresh. */
  stored?: { etag: string | undefined; maxAgeS: number };
}

/** An answer yoga made whole (the GraphiQL page, a preflight, an event stream, a 406): sent with its own headers and ours. */
export interface PassedAnswer {
  response: Response;
  /** What GraphQL said of it; null when no GraphQL ran (the page, a preflight): no log line, no count. */
  facts: AnswerFacts | null;
}

export type Answer = JsonAnswer | PassedAnswer;
