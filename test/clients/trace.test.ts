// A trace asked for from Apollo Client 4 and urql 6, as docs/clients.md#asking-for-a-trace shows: the
// header on the link or in fetchOptions, the trace read from each result's extensions.
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Client, cacheExchange, fetchExchange } from '@urql/core';
import { tap } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { type GatewayTrace, TRACE_SHAPE } from '../../src/upstream/request-trace.js';
import { KEY_1, useStack } from '../fixture.js';

const stack = useStack();
const WEBSITE = 'query Site { website(id: "1") { id domain } }';
const headers = { authorization: `Bearer ${KEY_1}`, 'x-gateway-trace': '1' };

describe('a trace asked for by a client', () => {
  it('reaches an Apollo Client link', async () => {
    const traces: GatewayTrace[] = [];
    const showTrace = new ApolloLink((operation, forward) =>
      forward(operation).pipe(
        tap((result) => {
          if (result.extensions?.trace) traces.push(TRACE_SHAPE.parse(result.extensions.trace));
        }),
      ),
    );
    const client = new ApolloClient({
      link: showTrace.concat(new HttpLink({ uri: stack.endpoint, headers })),
      cache: new InMemoryCache(),
    });
    const { data } = await client.query({ query: gql(WEBSITE) });
    expect(data).toMatchObject({ website: { id: '1' } });
    expect(traces.map((trace) => trace.calls.map((call) => `${call.method} ${call.path} ${call.fields.join()}`))).toEqual([
      ['GET /api/v1/websites/1 website'],
    ]);
  });

  it("is in an urql result's extensions", async () => {
    const client = new Client({ url: stack.endpoint, exchanges: [cacheExchange, fetchExchange], fetchOptions: () => ({ headers }) });
    const result = await client.query(WEBSITE, {}).toPromise();
    expect(result.error).toBeUndefined();
    const trace = TRACE_SHAPE.parse(result.extensions?.trace);
    expect(trace.totals.upstreamCalls).toBe(1);
    expect(trace.calls[0]).toMatchObject({ method: 'GET', path: '/api/v1/websites/1', status: 200, fields: ['website'] });
  });
});
