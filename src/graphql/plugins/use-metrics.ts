// The GraphQL figures for Prometheus: each request's duration by operation, type and outcome, and
// its errors by code. Labels are bounded: an operation is named only by the document's own operation
// name (never the client's operationName text, nor variables), and after `maxOperations` distinct
// names any new one is counted as `other`, so a client inventing names cannot grow the series.
import type { Plugin } from 'graphql-yoga';
import { Counter, Histogram, type Registry } from 'prom-client';
import { integer } from '../../settings.js';
import type { Planned } from '../../schema/plan.js';
import type { PlanStep } from './use-plan.js';

/** METRICS_MAX_OPERATIONS: how many operation names the metrics label as themselves. */
export const METRICS_SETTINGS = {
  maxOperations: integer('METRICS_MAX_OPERATIONS', {
    fallback: 200,
    min: 0,
    max: 100_000,
    unit: 'names',
    doc: 'distinct operation names labelled as themselves in the metrics; names seen after them count as `other`',
  }),
};
const DEFAULT_METRICS_MAX_OPERATIONS = METRICS_SETTINGS.maxOperations.fallback;

export interface MetricsOptions {
  /** The request's plan, for the operation's name and type. Required. */
  plan: PlanStep;
  /** Where the figures are registered (the gateway's registry, served by http/metrics-listener.ts). Required. */
  registry: Registry;
  /** Histogram buckets in seconds. Required (the gateway's, shared with the upstream histogram). */
  buckets: number[];
  /** Distinct operation names labelled as themselves (METRICS_MAX_OPERATIONS; default DEFAULT_METRICS_MAX_OPERATIONS); later ones: `other`. */
  maxOperations?: number;
}

/** An error code as the gateway and yoga write them; anything else is not a label. */
const ERROR_CODE = /^[A-Z][A-Z0-9_]{0,63}$/;

export interface MetricsStep extends Plugin {
  /** A query answered with a stored answer, before GraphQL ran (cache/stored-answers.ts): counted as the others. */
  observeStored(operation: string | null, seconds: number): void;
}

export function useMetrics({ plan, registry, buckets, maxOperations = DEFAULT_METRICS_MAX_OPERATIONS }: MetricsOptions): MetricsStep {
  const duration = new Histogram({
    name: 'gateway_graphql_request_duration_seconds',
    help: 'GraphQL requests, by operation name (anonymous, other), type (query, mutation, subscription, unknown) and outcome (ok, error)',
    labelNames: ['operation', 'type', 'outcome'] as const,
    buckets,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'gateway_graphql_errors_total',
    help: 'Errors in GraphQL answers, by code',
    labelNames: ['code'] as const,
    registers: [registry],
  });
  const named = new Set<string>();
  const operationLabel = (name: string | undefined): string => {
    if (name === undefined) return 'anonymous';
    if (named.has(name)) return name;
    if (named.size >= maxOperations) return 'other';
    named.add(name);
    return name;
  };

  const started = new WeakMap<Request, { at: number; operation: string; type: string }>();
  const nameOperation = (args: { contextValue: Planned & { request: Request } }): void => {
    const entry = started.get(args.contextValue.request);
    const operation = plan.of(args.contextValue)?.operation;
    if (!entry || !operation) return;
    entry.operation = operationLabel(operation.name);
    entry.type = operation.type;
  };
  return {
    observeStored(operation, seconds) {
      duration.observe({ operation: operationLabel(operation ?? undefined), type: 'query', outcome: 'ok' }, seconds);
    },
    onRequest({ request }) {
      started.set(request, { at: performance.now(), operation: 'anonymous', type: 'unknown' });
    },
    onExecute: ({ args }) => nameOperation(args),
    onSubscribe: ({ args }) => nameOperation(args),
    onResultProcess({ request, result }) {
      const entry = started.get(request);
      if (!entry) return;
      started.delete(request);
      let count = 0;
      for (const one of Array.isArray(result) ? result : [result]) {
        if (!('errors' in one) || !one.errors) continue;
        for (const error of one.errors) {
          const code = error.extensions?.code;
          errors.inc({ code: typeof code === 'string' && ERROR_CODE.test(code) ? code : 'OTHER' });
          count++;
        }
      }
      const seconds = (performance.now() - entry.at) / 1000;
      duration.observe({ operation: entry.operation, type: entry.type, outcome: count === 0 ? 'ok' : 'error' }, seconds);
    },
  };
}
