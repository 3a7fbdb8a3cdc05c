import { describe, expect, it } from 'vitest';
import { usePlan } from '../../../src/graphql/plugins/use-plan.js';
import { useRequestLog, type RequestLogLine } from '../../../src/graphql/plugins/use-request-log.js';
import { post, tinyYoga } from './yoga.js';

function logged() {
  const lines: RequestLogLine[] = [];
  const plan = usePlan();
  const yoga = tinyYoga([plan, useRequestLog({ plan, log: { write: (operation, fields) => lines.push({ operation, ...fields }) } })]);
  return { lines, yoga };
}

describe('useRequestLog', () => {
  it('names the operation of a document with one, even without operationName', async () => {
    const { lines, yoga } = logged();
    await post(yoga, { query: 'query Greeting { hello }' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ operation: 'Greeting', outcome: 'ok', upstreamCalls: 0, cost: null });
    expect(lines[0]?.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('names the operation asked for among several, and none for an anonymous one', async () => {
    const { lines, yoga } = logged();
    await post(yoga, { query: 'query A { hello } query B { calls }', operationName: 'B' });
    await post(yoga, { query: '{ hello }' });
    expect(lines.map((line) => line.operation)).toEqual(['B', null]);
  });

  it('logs the error codes, and never the variables or the headers', async () => {
    const { lines, yoga } = logged();
    await post(
      yoga,
      { query: 'query Q($name: String) { hello(name: $name) nope }', variables: { name: 's3cret' } },
      {
        authorization: 'Bearer key-123',
      },
    );
    expect(lines[0]).toMatchObject({ outcome: 'error', errorCodes: ['GRAPHQL_VALIDATION_FAILED'] });
    const text = JSON.stringify(lines);
    expect(text).not.toContain('s3cret');
    expect(text).not.toContain('key-123');
  });
});
