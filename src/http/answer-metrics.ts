// The GraphQL figures for Prometheus, counted by the ending (answer.ts) for every answer however it was
// made: each request's duration by operation, type and outcome, and its errors by code. Labels are bounded: an operation is named only by the document's own operation
// name (never the client's operationName text, nor variables), and after `maxOperations` distinct
// names any new one is counted as `other`, so a client inventing names cannot grow the series.
import { Counter, Histogram, type Registry } from 'prom-client';
import { integer } from '../settings.js';
import type { AnswerCounter } from './answer.js';

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
  /** Where the figures are registered (the gateway's registry, served by metrics-listener.ts). Required. */
  registry: Registry;
  /** Histogram buckets in seconds. Required (the gateway's, shared with the upstream histogram). */
  buckets: number[];
  /** Distinct operation names labelled as themselves (METRICS_MAX_OPERATIONS; default DEFAULT_METRICS_MAX_OPERATIONS); later ones: `other`. */
  maxOperations?: number;
}

/** An error code as the gateway and yoga write them; anything else is not a label. */
const ERROR_CODE = /^[A-Z][A-Z0-9_]{0,63}$/;

export function createAnswerMetrics({ registry, buckets, maxOperations = DEFAULT_METRICS_MAX_OPERATIONS }: MetricsOptions): AnswerCounter {
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
  return {
    answered(facts, seconds) {
      for (const code of facts.errorCodes) errors.inc({ code: ERROR_CODE.test(code) ? code : 'OTHER' });
      const outcome = facts.errorCodes.length === 0 ? 'ok' : 'error';
      duration.observe({ operation: operationLabel(facts.documentName), type: facts.type, outcome }, seconds);
    },
  };
}
