// Subscriptions as live queries: the selection polled as a query through the whole query pipeline, once
// per topic for all its streams (live/hub.ts). An error polling would only repeat ends a stream. Event
// streams leave with `X-Accel-Buffering: no` (http/answer.ts): nginx then passes each event as it comes.
import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  print,
  visit,
  type DocumentNode,
  type ExecutionResult,
  type NamedTypeNode,
  type OperationDefinitionNode,
} from 'graphql';
import { mapAsyncIterator, type Plugin } from 'graphql-yoga';
import { operationPlan } from '../../schema/plan.js';
import { type ErrorCode, GatewayError, isGatewayError } from '../../errors.js';
import { LIVE_DEFAULTS, type LiveHub, type PollOutcome } from '../../live/hub.js';
import type { KeyReading } from '../../api-key.js';
import type { GatewayContext } from '../../schema/context.js';
import type { GatewayServerContext } from '../context.js';
import { STREAMS_FULL_MESSAGE } from './use-work.js';

export interface LiveQuery {
  query: string;
  variables: Record<string, unknown>;
  operationName?: string;
  /** As the subscription's request state read it: canonical, checked for form. */
  subscriber: { authorization: string; credentials: KeyReading };
}

export interface LiveOptions {
  hub: LiveHub;
  maxStreamsPerKey?: number;
  /** Runs a query as a client's request would be run. */
  runQuery: (query: LiveQuery, signal: AbortSignal) => Promise<PlainResult>;
}

const FINAL_CODES = new Set<string>([
  'NOT_FOUND',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'BAD_USER_INPUT',
  'UNSUPPORTED',
  'COST_LIMIT_EXCEEDED',
  'GRAPHQL_VALIDATION_FAILED',
] satisfies ErrorCode[]);

/** A poll takes a cached read made at the same moment (another document polled together), not an earlier poll's. */
export const liveFreshnessMs = (intervalMs: number): number => Math.min(1_000, intervalMs / 2);

/** Below this share of the key's limit left, polls wait a minute. */
const LOW_REMAINING_SHARE = 0.25;

/** Subscription.website and Query.website take the same selection. */
export function asQuery(document: DocumentNode, operationName: string | null | undefined): string {
  const operation = operationPlan(document, operationName)?.definition;
  // The other operations go: a poll runs this one alone. A fragment on Subscription is one on Query.
  const rewritten = visit(document, {
    OperationDefinition: (node: OperationDefinitionNode) => (node === operation ? { ...node, operation: OperationTypeNode.QUERY } : null),
    NamedType: (node: NamedTypeNode) =>
      node.name.value === 'Subscription' ? { ...node, name: { kind: Kind.NAME, value: 'Query' } } : undefined,
  });
  return print(rewritten);
}

type PlainResult = Omit<ExecutionResult, 'errors'> & { errors?: readonly PlainError[] };
interface PlainError {
  message: string;
  path?: readonly (string | number)[];
  extensions?: Record<string, unknown>;
}

export function pollOutcome(answer: PlainResult): PollOutcome<PlainResult> {
  // The result is compared, and shared between gateways, as JSON.
  const errors: PlainError[] = (answer.errors ?? []).map((error) => ({
    message: error.message,
    path: error.path,
    extensions: error.extensions ?? {},
  }));
  const codes = errors.map((error) => String(error.extensions?.code ?? ''));
  const extensions = (answer.extensions ?? {}) as {
    upstreamCalls?: number;
    stale?: boolean;
    rateLimit?: { limit: number; remaining: number };
  };
  const upstreamCalls = typeof extensions.upstreamCalls === 'number' ? extensions.upstreamCalls : 0;
  if (codes.some((code) => FINAL_CODES.has(code)) || answer.data === undefined || answer.data === null) {
    // A key the upstream refuses is refused for every document: all of its streams end with it.
    return { result: { errors }, upstreamCalls, final: true, ...(codes.includes('UNAUTHENTICATED') ? { endsKey: true } : {}) };
  }
  const rateLimited = errors.find((error) => error.extensions?.code === 'RATE_LIMITED');
  const retryAfterS = Number(rateLimited?.extensions?.retryAfter ?? 0);
  const { rateLimit } = extensions;
  const low = rateLimit !== undefined && rateLimit.remaining < rateLimit.limit * LOW_REMAINING_SHARE;
  const backoffMs = Math.max(retryAfterS * 1000, low ? 60_000 : 0);
  // Each poll's figures differ every time: only data and errors are pushed, and whether it is stale.
  const stale = extensions.stale === true || rateLimited !== undefined;
  return {
    result: { data: answer.data, ...(errors.length > 0 ? { errors } : {}), ...(stale ? { extensions: { stale: true } } : {}) },
    upstreamCalls,
    final: false,
    ...(backoffMs > 0 ? { backoffMs } : {}),
  };
}

/** Errors made GraphQLErrors (passed on unmasked); a result without errors gets the hub's JSON for yoga's SSE. */
function revive(result: PlainResult, hub: LiveHub): ExecutionResult {
  if (result.errors === undefined) {
    const text = hub.textOf(result);
    if (text !== undefined && !Object.hasOwn(result, 'stringify')) Object.defineProperty(result, 'stringify', { value: () => text });
    return result as ExecutionResult;
  }
  const errors = result.errors.map((error) => new GraphQLError(error.message, { path: error.path, extensions: error.extensions ?? {} }));
  return { ...result, errors };
}

const KEY_NOT_CHECKED = 'The analytics service could not check the API key: subscribe again in a moment.';

/** While the key's budget keeps a new topic's first poll waiting, as on a 429. */
const budgetSpent = (retryAfterS: number): PlainResult => ({
  data: null,
  errors: [
    {
      message: `This key's live polls made their LIVE_CALLS_PER_MIN upstream calls this minute: the first result comes in about ${retryAfterS} s.`,
      extensions: { code: 'RATE_LIMITED', retryAfter: retryAfterS },
    },
  ],
  extensions: { stale: true },
});

export function useLive({ hub, runQuery, maxStreamsPerKey = LIVE_DEFAULTS.maxStreamsPerKey }: LiveOptions): Plugin {
  return {
    onSubscribe({ args, setSubscribeFn }) {
      setSubscribeFn(async (subscribeArgs) => {
        const { state } = subscribeArgs.contextValue as GatewayServerContext;
        // Canonical: every spelling of one key shares its topics, cap and budget.
        const { credentials } = state;
        if ('problem' in credentials) return { errors: [new GatewayError('UNAUTHENTICATED', credentials.problem)] };
        const { authorization } = credentials;
        // A key not accepted lately is checked while it holds a request's slot: its polls may never ask
        // the upstream, and a key nobody issued must not hold a stream's place for its lifetime.
        const context = subscribeArgs.contextValue as GatewayContext;
        const slot = state.slot;
        if (slot !== undefined && !slot.stream) {
          const refused = await context.source.checkKey().then(
            () => null,
            (error: unknown) => error,
          );
          if (refused) return { errors: [isGatewayError(refused) ? refused : new GatewayError('UPSTREAM_ERROR', KEY_NOT_CHECKED)] };
          if (!slot.becomeStream(true)) return { errors: [new GatewayError('OVERLOADED', STREAMS_FULL_MESSAGE)] };
        }
        const query = asQuery(subscribeArgs.document, subscribeArgs.operationName);
        const variables = (subscribeArgs.variableValues ?? {}) as Record<string, unknown>;
        const key = await hub.keyId(authorization);
        const live: LiveQuery = {
          query,
          variables,
          subscriber: { authorization, credentials },
          ...(args.operationName ? { operationName: args.operationName } : {}),
        };
        const topic = { key, id: JSON.stringify([key, query, variables, args.operationName ?? null]) };
        if (hub.streamsOf(key) >= maxStreamsPerKey) {
          const message = `This key has ${maxStreamsPerKey} live streams open already: close one first.`;
          return { errors: [new GraphQLError(message, { extensions: { code: 'OVERLOADED' satisfies ErrorCode } })] };
        }
        // Leaving the stream leaves the hub's at once, even while a next() waits for a change.
        return mapAsyncIterator(
          hub.subscribe(topic, async (signal) => pollOutcome(await runQuery(live, signal)), budgetSpent),
          (result: PlainResult) => revive(result, hub),
        );
      });
    },
  };
}
