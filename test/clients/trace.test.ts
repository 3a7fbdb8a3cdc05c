// A trace asked for from Apollo Client 4 and @urql/core 6, as docs/clients.md#asking-for-a-trace shows: the
// header on the link or in fetchOptions, the trace read from each result's extensions; and the page's
// snippets themselves, run as shown (the gateway's address aside) by Node.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Client, cacheExchange, fetchExchange } from '@urql/core';
import { tap } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { type GatewayTrace, TRACE_SHAPE } from '../../src/upstream/request-trace.js';
import { ROOT, fencesOf, readDoc } from '../docs.js';
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

  // The page's two snippets, each a module of its own; Node strips their types.
  const page = readDoc('docs/clients.md');
  const section = page.slice(page.indexOf('## Asking for a trace'));
  const snippets = fencesOf('docs/clients.md', section.slice(0, section.indexOf('\n## ', 3))).filter((fence) => fence.lang === 'ts');

  it.each(snippets.map((snippet, index) => [index + 1, snippet.text]))('runs snippet %i of the page as shown', async (index, text) => {
    // A folder of its own that finds the repository's packages (Node strips no types under node_modules).
    const folder = mkdtempSync(join(tmpdir(), 'clients-snippet-'));
    symlinkSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'));
    const file = join(folder, `trace-${index}.mts`);
    expect(text).toContain("'http://127.0.0.1:4000/graphql'");
    writeFileSync(file, String(text).replace("'http://127.0.0.1:4000/graphql'", `'${stack.endpoint}'`));
    const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: folder }).finally(() =>
      rmSync(folder, { recursive: true, force: true }),
    );
    // console.table of the trace's calls: the website's read.
    expect(stdout).toMatch(/GET\s*'?\s*│?.*\/api\/v1\/websites\/1/s);
  });
});
