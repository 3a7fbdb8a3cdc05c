import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { usePlan } from '../../src/graphql/plugins/use-plan.js';
import { useAnswerFacts } from '../../src/graphql/plugins/use-answer-facts.js';
import { answerOf } from '../../src/graphql/yoga.js';
import { createEnding, type RequestLogFields } from '../../src/http/answer.js';
import { RequestLog, type RequestLogLine } from '../../src/http/request-log.js';
import type { Plugin } from 'graphql-yoga';
import { contextFor, tinyYoga } from '../graphql/plugins/yoga.js';

/** A tiny yoga whose answers are settled by the ending, its log lines kept. */
function logged() {
  const lines: RequestLogLine[] = [];
  const plan = usePlan();
  const yoga = tinyYoga([plan, useAnswerFacts({ plan })] as Plugin[]);
  const ending = createEnding({
    cors: () => [],
    etagSecret: () => 'secret',
    costLimit: 100,
    log: { write: (operation, fields) => lines.push({ operation, ...fields }) },
  });
  return { lines, yoga, ending };
}

/** A request to a logged yoga, settled (its line written) as the gateway settles every answer. */
async function post(
  { yoga, ending }: ReturnType<typeof logged>,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<void> {
  const serverContext = contextFor(headers.authorization);
  const response = await yoga.fetch(
    'http://yoga.test/graphql',
    { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) },
    serverContext,
  );
  const answer = await answerOf(response, serverContext.run);
  if ('body' in answer) ending.settle(null, serverContext.state, answer);
}

describe('the request log, written by the ending from what GraphQL said of its answer', () => {
  it('names the operation of a document with one, even without operationName', async () => {
    const log = logged();
    const { lines } = log;
    await post(log, { query: 'query Greeting { hello }' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ operation: 'Greeting', outcome: 'ok', upstreamCalls: 0, cost: null });
    expect(lines[0]?.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('names the operation asked for among several, and none for an anonymous one', async () => {
    const log = logged();
    const { lines } = log;
    await post(log, { query: 'query A { hello } query B { calls }', operationName: 'B' });
    await post(log, { query: '{ hello }' });
    expect(lines.map((line) => line.operation)).toEqual(['B', null]);
  });

  it('logs the error codes, and never the variables or the headers', async () => {
    const log = logged();
    const { lines } = log;
    await post(
      log,
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

describe('RequestLog', () => {
  /** A pino logger as the gateway makes its own (src/log.ts: defaults, no base), writing into `lines`. */
  const loggerInto = (lines: string[]) => pino({ level: 'info', base: null }, { write: (line: string) => void lines.push(line) });
  const timeless = (line: string): string => line.replace(/^\{"level":30,"time":\d+,/, '{"level":30,"time":0,');

  const names = [
    null,
    'Dashboard',
    'with "quotes" and \\ a backslash',
    'Tableau de bord – été 📈',
    'a\nnew line and a \u0001 control',
    'x'.repeat(41),
    'y'.repeat(42),
    'z'.repeat(150),
  ];
  const fields: RequestLogFields[] = [
    { durationMs: 12.34, upstreamCalls: 7, cost: 7, cache: { hits: 0, misses: 7, stale: 0 }, outcome: 'ok' },
    { durationMs: 0.01, upstreamCalls: 0, cost: 7, cache: { hits: 7, misses: 0, stale: 0 }, outcome: 'ok', storedAnswer: true },
    {
      durationMs: 0.5,
      upstreamCalls: 0,
      cost: 3,
      cache: { hits: 3, misses: 0, stale: 0 },
      outcome: 'ok',
      storedAnswer: true,
      trace_id: 'abc123',
      tool: 'website_summary',
    },
    { durationMs: 4, upstreamCalls: 1, cost: 1, cache: { hits: 0, misses: 1, stale: 0 }, outcome: 'ok', tool: 'get_website' },
    {
      durationMs: 3,
      upstreamCalls: 1,
      cost: null,
      cache: { hits: 0, misses: 1, stale: 1 },
      outcome: 'error',
      errorCodes: ['BAD_USER_INPUT', 'odd "code" \\'],
      trace_id: undefined,
    },
    { durationMs: Number.NaN, upstreamCalls: 2, cost: Number.POSITIVE_INFINITY, cache: { hits: 1, misses: 1, stale: 0 }, outcome: 'ok' },
  ];

  it("writes through its template, for the gateway's own logger, the very text pino writes", () => {
    const byPino: string[] = [];
    const byTemplate: string[] = [];
    const throughPino = new RequestLog(loggerInto(byPino));
    const sink: string[] = [];
    const templated = new RequestLog(loggerInto(sink), { write: (line) => void byTemplate.push(line) });
    const before = Date.now();
    for (const name of names)
      for (const each of fields) {
        throughPino.write(name, each);
        templated.write(name, each);
      }
    expect(sink).toEqual([]);
    expect(byTemplate).toHaveLength(names.length * fields.length);
    expect(byTemplate.map(timeless)).toEqual(byPino.map(timeless));
    const after = Date.now();
    // Each line one JSON object, its time the clock's while it was written.
    for (const line of byTemplate) {
      expect(line.endsWith('}\n')).toBe(true);
      const { time } = JSON.parse(line) as { time: number };
      expect(time).toBeGreaterThanOrEqual(before);
      expect(time).toBeLessThanOrEqual(after);
    }
    expect(JSON.parse(byTemplate.at(-1) as string)).toMatchObject({ operation: 'z'.repeat(100), durationMs: null, cost: null });
  });

  it('writes nothing through its template once its logger is above info', () => {
    const written: string[] = [];
    const logger = loggerInto([]);
    const log = new RequestLog(logger, { write: (line) => void written.push(line) });
    log.write('Dashboard', fields[0] as RequestLogFields);
    logger.level = 'warn';
    log.write('Dashboard', fields[0] as RequestLogFields);
    expect(written).toHaveLength(1);
  });
});
