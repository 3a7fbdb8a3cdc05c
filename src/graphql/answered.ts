// What an answer is, whichever path made it: plain data that the ending (http/answer.ts) sends.

export interface AnswerUsage {
  upstreamCalls: number;
  cost: number | null;
  cache: { hits: number; misses: number; stale: number; freshForS: number | null };
}

export interface AnswerFacts {
  /** The operation as the log names it: the request's operationName, or the document's own name. */
  operation: string | null;
  /** The metrics' label: never the client's text. */
  documentName: string | undefined;
  type: 'query' | 'mutation' | 'subscription' | 'unknown';
  /** In order (GRAPHQL_ERROR for one without). */
  errorCodes: readonly string[];
  /** None when nothing ran. */
  usage: AnswerUsage | null;
  keyAccepted: boolean;
  traceId?: string;
}

/** A GraphQL answer as JSON, its text made once by the path that answered. */
export interface JsonAnswer {
  status: number;
  contentType: string;
  body: string | Uint8Array;
  /** For a query's answer without errors: its ETag and its stored form are made of it. */
  data: string | null;
  facts: AnswerFacts;
  /** Its own besides its type (a 405's Allow), name then value. */
  headers?: string[];
  etag?: string;
  /** Sent from its stored answer. */
  stored?: { etag: string | undefined; maxAgeS: number };
}

/** An answer yoga made whole (the GraphiQL page, a preflight, an event stream). */
export interface PassedAnswer {
  response: Response;
  /** null when no GraphQL ran: no log line, no count. */
  facts: AnswerFacts | null;
}

export type Answer = JsonAnswer | PassedAnswer;
