import { Writable } from 'node:stream';
import { getIntrospectionQuery, type IntrospectionQuery } from 'graphql';
import { pino } from 'pino';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { KEY_1, present, dataOf, firstError, postGraphQL, testConfig, useStack } from '../fixture.js';

/** `{ website(id) { … } }`: null (with NOT_FOUND) when the caller has no such website. */
interface WebsiteResult<W> {
  website: W | null;
}
type DomainData = WebsiteResult<{ domain: string }>;
/** A statistic as STAT selects it. */
interface TotalCount {
  totalCount: number;
}
interface StatData {
  stats: TotalCount;
}
/** The body of an HTTP error, answered before the operation is executed. */
interface ErrorBody {
  errors: { message: string }[];
}

/** `value`, failing the test when it is null or undefined. */
const stack = useStack();
let id: string;
beforeAll(async () => {
  const response = await stack.gql<{ websites: { nodes: { id: string }[] } }>('{ websites { nodes { id } } }');
  id = present(dataOf(response).websites.nodes[0], 'a website of KEY_1').id;
});
beforeEach(() => {
  stack.sandbox.setKnobs({ latencyMs: 0, faultRate: 0 });
});

const STAT = 'stats(name: VISITOR, from: "2026-02-14", to: "2026-03-15") { totalCount }';

describe('abuse is refused before any upstream call', () => {
  it('a deeply nested query (the schema has no cycles: introspection is the way down)', async () => {
    const deep = `{ website(id: "${id}") { domain } __type(name: "Website") { ${'fields { type { ofType { '.repeat(6)}name${' } } }'.repeat(6)} } }`;
    // The introspection part is left untyped: it is refused before it could answer anything.
    const response = await stack.gql<DomainData & { __type: unknown }>(deep);
    expect(firstError(response).message).toMatch(/^This operation nests fields \d+ deep; the limit is 15 \(MAX_DEPTH\)/);
    expect(firstError(response).extensions).toMatchObject({ code: 'DEPTH_LIMIT_EXCEEDED', depthLimit: 15 });
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('lets the full introspection query of GraphiQL through', async () => {
    const response = await stack.gql<IntrospectionQuery>(getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true }));
    expect(response.errors).toBeUndefined();
  });

  it('1,000 aliases (the token limit already stops it while parsing)', async () => {
    const aliases = Array.from({ length: 1000 }, (_, i) => `a${i}: website(id: "${id}") { domain }`).join(' ');
    const response = await stack.gql<Record<string, { domain: string } | null>>(`{ ${aliases} }`);
    expect(firstError(response).extensions).toMatchObject({ code: 'TOKEN_LIMIT_EXCEEDED', tokenLimit: 2000 });
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('more aliases than allowed, within the token limit', async () => {
    const aliases = Array.from({ length: 40 }, (_, i) => `a${i}: domain`).join(' ');
    const response = await stack.gql<WebsiteResult<Record<string, string>>>(`{ website(id: "${id}") { ${aliases} } }`);
    expect(firstError(response).message).toMatch(/^This operation uses 40 aliases; the limit is 30 \(MAX_ALIASES\)/);
    expect(firstError(response).extensions).toMatchObject({ code: 'ALIAS_LIMIT_EXCEEDED', aliasLimit: 30, aliases: 40 });
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('too many tokens', async () => {
    const fields = Array.from({ length: 2100 }, () => 'domain').join(' ');
    const response = await stack.gql<DomainData>(`{ website(id: "${id}") { ${fields} } }`);
    expect(firstError(response).message).toMatch(/^This document has more than 2000 tokens .*the limit is 2000 \(MAX_TOKENS\)/);
    expect(firstError(response).extensions).toMatchObject({ code: 'TOKEN_LIMIT_EXCEEDED', tokenLimit: 2000 });
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('a 5 MB body', async () => {
    const response = await fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` },
      body: JSON.stringify({ query: `{ website(id: "${id}") { domain } }`, variables: { pad: 'x'.repeat(5 * 1024 * 1024) } }),
    });
    expect(response.status).toBe(413);
    const body = (await response.json()) as ErrorBody;
    expect(body.errors[0]?.message).toBe('The request body is larger than the 65536-byte limit (MAX_BODY_BYTES).');
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('a query whose cost is over the limit, with its cost and the limit in the message', async () => {
    const six = Array.from({ length: 6 }, (_, i) => `s${i}: ${STAT}`).join(' ');
    const response = await stack.gql<{ websites: { nodes: Record<string, TotalCount>[] } }>(
      `{ websites(perPage: 100) { nodes { ${six} } } }`,
    );
    expect(response.data ?? null).toBeNull();
    const error = firstError(response);
    expect(error.message).toContain('could make 601 calls');
    expect(error.message).toContain('the limit is 100');
    expect(error.extensions).toMatchObject({ code: 'COST_LIMIT_EXCEEDED', cost: 601, costLimit: 100 });
    expect(response.extensions).toMatchObject({ cost: { requested: 601, limit: 100 }, upstreamCalls: 0 });
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('the cost counts page sizes given in variables', async () => {
    const response = await stack.gql<{ websites: { nodes: { a: TotalCount; b: TotalCount }[] } }>(
      `query($n: Int) { websites(perPage: $n) { nodes { a: ${STAT} b: ${STAT} } } }`,
      { n: 100 },
    );
    expect(firstError(response).extensions).toMatchObject({ cost: 201 });
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('a batched array of 100 operations', async () => {
    const batch = Array.from({ length: 100 }, () => ({ query: `{ website(id: "${id}") { domain } }` }));
    const response = await fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` },
      body: JSON.stringify(batch),
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    const body = (await response.json()) as ErrorBody;
    expect(body.errors[0]?.message).toMatch(/batch|object/i);
    expect(stack.sandbox.log.count).toBe(0);
  });
});

describe('cost in extensions', () => {
  it('a dashboard list of 25 websites with one stat each passes and reports its cost', async () => {
    const response = await stack.gql<{ websites: { nodes: StatData[] } }>(`{ websites(perPage: 25) { nodes { ${STAT} } } }`);
    expect(response.errors).toBeUndefined();
    expect(response.extensions).toMatchObject({ cost: { requested: 26, limit: 100 } });
    expect(response.extensions?.upstreamCalls).toBe(stack.sandbox.log.count);
  });
});

describe('web safety', () => {
  it("runs a GET query with no special header (urql's default), never a GET mutation", async () => {
    const get = (query: string) =>
      fetch(`${stack.endpoint}?query=${encodeURIComponent(query)}`, { headers: { authorization: `Bearer ${KEY_1}` } });
    const query = await get(`{ website(id: "${id}") { domain } }`);
    expect(query.status).toBe(200);
    expect(stack.sandbox.log.count).toBe(1);
    stack.sandbox.log.reset();
    const mutation = await get(`mutation { deleteWebsite(id: "${id}") { deletedId } }`);
    expect(mutation.status).toBe(405);
    expect(stack.sandbox.log.count).toBe(0);
  });

  it.each(['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain;charset=UTF-8', null])(
    'refuses a POST a cross-site form could send (%s) with 415, key or not, nothing upstream',
    async (contentType) => {
      const body = contentType?.startsWith('multipart')
        ? '--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n{ websites { totalCount } }\r\n--x--\r\n'
        : contentType === 'application/x-www-form-urlencoded'
          ? `query=${encodeURIComponent('{ websites { totalCount } }')}`
          : JSON.stringify({ query: '{ websites { totalCount } }' });
      const withAndWithoutKey: Record<string, string>[] = [{ authorization: `Bearer ${KEY_1}` }, {}];
      for (const headers of withAndWithoutKey) {
        const response = await fetch(stack.endpoint, {
          method: 'POST',
          headers: { ...headers, ...(contentType === null ? {} : { 'content-type': contentType }) },
          body: contentType === null ? new Blob([body]) : body,
        });
        expect(response.status).toBe(415);
        const json = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
        expect(json.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      }
      expect(stack.sandbox.log.count).toBe(0);
    },
  );

  it('sends no CORS headers to another site by default', async () => {
    const response = await fetch(stack.endpoint, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('allows only the configured origins', async () => {
    const gateway = await createGateway(testConfig(stack.sandbox.url, { CORS_ORIGINS: 'https://app.example.com' }));
    try {
      const preflight = (origin: string) =>
        fetch(`${gateway.url}/graphql`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
        });
      const good = await preflight('https://app.example.com');
      expect(good.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(good.headers.get('access-control-allow-headers')).toContain('authorization');
      const bad = await preflight('https://evil.example');
      expect(bad.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
    } finally {
      await gateway.close();
    }
  });

  it('puts security headers on the GraphiQL page', async () => {
    const response = await fetch(stack.endpoint, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toContain("connect-src 'self'");
    await response.text();
  });

  it('masks unexpected errors in production', async () => {
    const gateway = await createGateway(testConfig(stack.sandbox.url, { NODE_ENV: 'production' }));
    try {
      // A variable of the wrong shape is a client error and is still explained...
      const typed = await postGraphQL<WebsiteResult<{ id: string }>>(
        `${gateway.url}/graphql`,
        { query: 'query($id: ID!) { website(id: $id) { id } }', variables: { id: { x: 1 } } },
        { authorization: `Bearer ${KEY_1}` },
      );
      expect(firstError(typed).message).toMatch(/\$id/);
      // ...and an error with no code of ours carries no stack or internals.
      stack.sandbox.scriptFaults([{ kind: 'html500' }]);
      const failed = await postGraphQL<WebsiteResult<{ id: string }>>(
        `${gateway.url}/graphql`,
        { query: `{ website(id: "${id}") { id } }` },
        {
          authorization: `Bearer ${KEY_1}`,
        },
      );
      expect(firstError(failed).extensions?.code).toBe('UPSTREAM_ERROR');
      expect(JSON.stringify(failed)).not.toMatch(/stack|originalError|node_modules/);
    } finally {
      await gateway.close();
    }
  });
});

describe('logs', () => {
  it('writes one line per request with operation, duration, calls and outcome, and never the key or a password', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const gateway = await createGateway(testConfig(stack.sandbox.url), { logger: pino({ base: null }, sink) });
    try {
      const endpoint = `${gateway.url}/graphql`;
      const headers = { authorization: `Bearer ${KEY_1}` };
      await postGraphQL<WebsiteResult<{ domain: string; a: TotalCount }>>(
        endpoint,
        { query: `query Dash { website(id: "${id}") { domain a: ${STAT} } }`, operationName: 'Dash' },
        headers,
      );
      await postGraphQL<{ createWebsite: { userErrors: { message: string }[] } }>(
        endpoint,
        {
          query: 'mutation Make($input: CreateWebsiteInput!) { createWebsite(input: $input) { userErrors { message } } }',
          variables: { input: { domain: 'log-example.com', privacy: 'PASSWORD', password: 'hunter2-secret' } },
          operationName: 'Make',
        },
        headers,
      );
      await postGraphQL<WebsiteResult<{ id: string }>>(endpoint, { query: '{ website(id: "999999") { id } }' }, headers);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatchObject({ msg: 'graphql request', operation: 'Dash', upstreamCalls: 2, cost: 2, outcome: 'ok' });
      expect(typeof lines[0]?.durationMs).toBe('number');
      expect(lines[1]).toMatchObject({ operation: 'Make', upstreamCalls: 1, outcome: 'ok' });
      expect(lines[2]).toMatchObject({ operation: null, outcome: 'error', errorCodes: ['NOT_FOUND'] });
      const text = JSON.stringify(lines);
      expect(text).not.toContain(KEY_1);
      expect(text).not.toContain('hunter2-secret');
    } finally {
      await gateway.close();
    }
  });
});

describe('resilience', () => {
  it('aborts pending upstream calls when the client goes away', async () => {
    stack.sandbox.setKnobs({ latencyMs: 1_500 });
    const controller = new AbortController();
    const request = fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_1}` },
      body: JSON.stringify({ query: `{ website(id: "${id}") { domain ${STAT} } }` }),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    for (let i = 0; i < 40 && stack.sandbox.log.inFlight < 2; i++) await new Promise((r) => setTimeout(r, 25));
    expect(stack.sandbox.log.inFlight).toBe(2);
    controller.abort();
    await request;
    for (let i = 0; i < 40 && stack.sandbox.log.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 25));
    // The upstream saw its requests go away well before their 1.5 s answer.
    expect(stack.sandbox.log.inFlight).toBe(0);
    expect(stack.sandbox.log.entries.every((entry) => entry.status === 0)).toBe(true);
  });

  it('opens the circuit when the upstream keeps failing, fails fast, and recovers by itself', async () => {
    const gateway = await createGateway(testConfig(stack.sandbox.url, { UPSTREAM_MAX_ATTEMPTS: '1', UPSTREAM_BREAKER_RESET_MS: '300' }));
    const ask = () =>
      postGraphQL<WebsiteResult<{ id: string }>>(
        `${gateway.url}/graphql`,
        { query: `{ website(id: "${id}") { id } }` },
        {
          authorization: `Bearer ${KEY_1}`,
        },
      );
    try {
      stack.sandbox.setKnobs({ faultRate: 1 });
      // At least 10 failures in the window (volumeThreshold) before it opens.
      let failures = 0;
      while (firstError(await ask()).extensions?.code === 'UPSTREAM_ERROR') {
        failures++;
        expect(failures).toBeLessThan(30);
      }
      expect(failures).toBeGreaterThanOrEqual(10);
      stack.sandbox.log.reset();
      const open = await ask();
      const error = firstError(open);
      expect(error.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(error.message).toContain('pauses calls');
      expect(stack.sandbox.log.count).toBe(0);
      stack.sandbox.setKnobs({ faultRate: 0 });
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect((await ask()).errors).toBeUndefined();
      expect((await ask()).errors).toBeUndefined();
    } finally {
      stack.sandbox.setKnobs({ faultRate: 0 });
      await gateway.close();
    }
  });
});
