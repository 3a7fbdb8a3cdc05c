// What a stored answer is (http/answer-cache.ts sends them, graphql/plugins/use-stored-answers.ts decides
// which answers are kept): where one goes in the store, and what it holds.

/** Where a request's answer goes in the store, and under which of its key's counters. */
export interface AnswerSlot {
  name: string;
  keyId: string;
  generation: number;
  writes: number;
  /** The operation that ran, once it runs. */
  operation?: { name: string | null; type: string };
}

/** What a stored answer holds (JSON in the store). */
export interface StoredAnswer {
  /** The key's generation and writes counters when the request that made it began. */
  generation: number;
  writes: number;
  /** Its headers, name then value, but Content-Length and Cache-Control (made when it is sent). */
  headers: string[];
  body: string;
  operation: string | null;
  cost: number | null;
  reads: number;
}

/** Where answers are kept. */
export interface AnswerKeeper {
  /** Stores `answer` in `slot` for `freshForMs`, unless the key's counters moved since the request began. */
  keep(slot: AnswerSlot, answer: StoredAnswer, freshForMs: number): Promise<void>;
}
