// The yoga step that stores answers for cache/stored-answers.ts, which sends them again in front of yoga.
// It runs after use-http-caching.ts, which sets Cache-Control and the ETag. An answer is stored only when
// its request was looked up and not found (its state has an answer slot), and only a query's answer,
// 200, without errors, from fresh reads (no stale one: those come from an upstream failure), as JSON:
// what use-http-caching.ts marks `private, max-age=N` with N > 0. Its `extensions` are stored as the same
// query answers when all its reads hit the cache, so that a stored answer says what a repeat would say.
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext, Usage } from '../../schema/context.js';
import type { AnswerKeeper, AnswerSlot, StoredAnswer } from '../../cache/stored-answers.js';
import type { GatewayServerContext } from '../request-state.js';
import type { PlanStep } from './use-plan.js';

/** Headers node or the sending makes itself, and those made when a stored answer is sent. */
const NOT_STORED = new Set(['content-length', 'cache-control', 'date', 'connection', 'keep-alive', 'transfer-encoding']);
const JSON_ANSWER = /^application\/(?:graphql-response\+)?json\b/;
const CACHEABLE = /^private, max-age=(\d+)$/;

export function useStoredAnswers({
  plan,
  answers,
}: {
  plan: PlanStep;
  answers: AnswerKeeper;
}): Plugin<GatewayContext, GatewayServerContext> {
  return {
    onExecute({ args }) {
      const slot = (args.contextValue as GatewayContext & GatewayServerContext).state?.answerSlot;
      const operation = plan.of(args.contextValue)?.operation;
      if (slot && operation) slot.operation = { name: operation.name ?? null, type: operation.type };
    },
    async onResponse({ response, serverContext, setResponse, fetchAPI }) {
      const state = serverContext.state;
      const slot = state?.answerSlot;
      if (state === undefined || slot === undefined) return;
      state.answerSlot = undefined;
      const { operation } = slot;
      const usage = state.context?.usage;
      const maxAge = CACHEABLE.exec(response.headers.get('cache-control') ?? '')?.[1];
      if (
        operation?.type !== 'query' ||
        usage === undefined ||
        response.status !== 200 ||
        maxAge === undefined ||
        Number(maxAge) <= 0 ||
        usage.cache.stale > 0 ||
        !JSON_ANSWER.test(response.headers.get('content-type') ?? '')
      )
        return;
      const text = await response.text();
      setResponse(new fetchAPI.Response(text, { status: 200, headers: response.headers }));
      const headers: string[] = [];
      response.headers.forEach((value, name) => headers.push(name, value));
      keepAnswer(answers, slot, { headers, text, usage, operation: operation.name, maxAgeS: Number(maxAge) });
    },
  };
}

/**
 * Stores a query's answer, 200 with data and no errors, from fresh reads, kept `private, max-age=maxAgeS`
 * (maxAgeS > 0): its headers (name, value, ...: those made when it is sent left out) and text, as a repeat says it.
 */
export function keepAnswer(
  answers: AnswerKeeper,
  slot: AnswerSlot,
  answered: { headers: readonly string[]; text: string; usage: Usage; operation: string | null; maxAgeS: number },
): void {
  const { usage } = answered;
  const body = asRepeated(answered.text, usage);
  if (body === null) return;
  const headers: string[] = [];
  for (let i = 0; i + 1 < answered.headers.length; i += 2) {
    const name = answered.headers[i] as string;
    if (!NOT_STORED.has(name)) headers.push(name, answered.headers[i + 1] as string);
  }
  const reads = usage.cache.hits + usage.cache.misses;
  const { generation, writes } = slot;
  const answer: StoredAnswer = { generation, writes, headers, body, operation: answered.operation, cost: usage.cost, reads };
  void answers.keep(slot, answer, answered.maxAgeS * 1000);
}

/**
 * The answer as the same query gives it when every read hits the cache: no upstream call, the reads
 * all hits, no rate limit (the upstream said nothing). Null when it is not a GraphQL answer with data
 * and the usage figures (use-usage-extensions.ts) and no errors.
 */
export function asRepeated(text: string, usage: Usage): string | null {
  let answer: { data?: unknown; errors?: unknown; extensions?: Record<string, unknown> };
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    return null;
  }
  const { extensions } = answer;
  if (answer.errors !== undefined || answer.data === undefined || extensions === undefined || !('upstreamCalls' in extensions)) return null;
  extensions.upstreamCalls = 0;
  extensions.cache = { hits: usage.cache.hits + usage.cache.misses, misses: 0, stale: 0 };
  // biome-ignore lint/performance/noDelete: a parsed answer, stringified at once and dropped.
  delete extensions.rateLimit;
  return JSON.stringify(answer);
}
