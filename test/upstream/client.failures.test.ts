import { createServer } from 'node:net';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import {
  KEY_1,
  KEY_2,
  present,
  dataOf,
  errorsOf,
  firstError,
  postGraphQL,
  restCalls,
  testConfig,
  useStack,
  type GraphQLErrorJson,
  type UserErrorData,
} from '../fixture.js';

/** `{ website(id) { … } }`: null (with NOT_FOUND) when the caller has no such website. */
interface WebsiteResult<W> {
  website: W | null;
}
interface WebsiteListData<W> {
  websites: { nodes: W[] };
}
interface CreateWebsiteData<W> {
  createWebsite: W;
}
interface IdDomain {
  id: string;
  domain: string;
}
interface TotalCount {
  totalCount: number;
}
type DomainData = WebsiteResult<{ domain: string }>;

/** `value`, failing the test when it is null or undefined. */
const stack = useStack({ env: { UPSTREAM_TIMEOUT_MS: '300', REQUEST_DEADLINE_MS: '3000' } });
let id: string;
beforeAll(async () => {
  const response = await stack.gql<WebsiteListData<{ id: string }>>('{ websites { nodes { id } } }');
  id = present(dataOf(response).websites.nodes[0], 'a website of KEY_1').id;
});
beforeEach(() => {
  stack.sandbox.setKnobs({ latencyMs: 0, faultRate: 0, rateLimit: null });
});

const WEBSITE = () => `{ website(id: "${id}") { domain } }`;

/** The one error of a query that must fail (its data is not looked at). */
async function errorOf(query: string, key: string | null = KEY_1): Promise<GraphQLErrorJson> {
  const response = await stack.gql<unknown>(query, {}, key);
  expect(response.status).toBe(200);
  expect(response.errors).toHaveLength(1);
  return firstError(response);
}

describe('authentication', () => {
  it('no key: UNAUTHENTICATED and no upstream call', async () => {
    const error = await errorOf(WEBSITE(), null);
    expect(error.extensions?.code).toBe('UNAUTHENTICATED');
    expect(error.message).toContain('Authorization: Bearer');
    expect(stack.sandbox.log.count).toBe(0);
  });

  it.each([['Basic dXNlcjpwYXNz'], ['Bearer'], ['Bearer two words'], ['Token abc'], ['Bearer key\u00e9']])(
    'malformed header %j: UNAUTHENTICATED and no upstream call',
    async (header) => {
      const response = await postGraphQL<DomainData>(stack.endpoint, { query: WEBSITE() }, { authorization: header });
      expect(firstError(response).extensions?.code).toBe('UNAUTHENTICATED');
      expect(stack.sandbox.log.count).toBe(0);
    },
  );

  it('a key the upstream does not know: UNAUTHENTICATED, and the key is not echoed', async () => {
    const error = await errorOf(WEBSITE(), 'wrong-key-123');
    expect(error.extensions).toMatchObject({ code: 'UNAUTHENTICATED', upstreamStatus: 401 });
    expect(JSON.stringify(error)).not.toContain('wrong-key-123');
  });

  it('upstream 403: FORBIDDEN', async () => {
    stack.sandbox.scriptFaults([{ kind: 'status', status: 403, body: '{"message":"Forbidden."}' }]);
    expect((await errorOf(WEBSITE())).extensions).toMatchObject({ code: 'FORBIDDEN', upstreamStatus: 403 });
  });

  it('introspection needs no key', async () => {
    const response = await stack.gql<{ __schema: { queryType: { name: string } } }>('{ __schema { queryType { name } } }', {}, null);
    expect(response.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });

  it("two keys interleaved never see each other's websites", async () => {
    const [one, two] = await Promise.all([
      stack.gql<WebsiteListData<IdDomain>>('{ websites(perPage: 100) { nodes { id domain } } }', {}, KEY_1),
      stack.gql<WebsiteListData<IdDomain>>('{ websites(perPage: 100) { nodes { id domain } } }', {}, KEY_2),
    ]);
    const ids1 = dataOf(one).websites.nodes.map((n) => n.id);
    const ids2 = dataOf(two).websites.nodes.map((n) => n.id);
    expect(ids1.length).toBeGreaterThan(0);
    expect(ids2.length).toBeGreaterThan(0);
    expect(ids1.filter((x) => ids2.includes(x))).toEqual([]);
    const first1 = present(ids1[0], 'a website of KEY_1');
    const first2 = present(ids2[0], 'a website of KEY_2');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const key = i % 2 === 0 ? KEY_1 : KEY_2;
        const target = i % 4 < 2 ? first1 : first2;
        return stack.gql<WebsiteResult<IdDomain>>(`{ website(id: "${target}") { id domain } }`, {}, key).then((r) => ({ key, target, r }));
      }),
    );
    for (const { key, target, r } of results) {
      const owns = key === KEY_1 ? ids1.includes(target) : ids2.includes(target);
      if (owns) expect(dataOf(r).website?.id).toBe(target);
      else {
        expect(r.data?.website).toBeNull();
        expect(firstError(r).extensions?.code).toBe('NOT_FOUND');
      }
    }
  });
});

describe('upstream failures', () => {
  it('429: RATE_LIMITED with retryAfter when the wait does not fit the deadline', async () => {
    stack.sandbox.scriptFaults([
      { kind: 'status', status: 429, body: '{"message":"Too Many Attempts."}', headers: { 'retry-after': '30' } },
    ]);
    expect((await errorOf(WEBSITE())).extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfter: 30, upstreamStatus: 429 });
    expect(stack.sandbox.log.count).toBe(1);
  });

  it('429 with a short Retry-After on a read is waited out and retried', async () => {
    stack.sandbox.scriptFaults([
      { kind: 'status', status: 429, body: '{"message":"Too Many Attempts."}', headers: { 'retry-after': '1' } },
    ]);
    const response = await stack.gql<DomainData>(WEBSITE());
    expect(dataOf(response).website?.domain).toMatch(/\./);
    expect(stack.sandbox.log.count).toBe(2);
  });

  it('the sandbox rate limit knob reaches the caller as RATE_LIMITED', async () => {
    stack.sandbox.setKnobs({ rateLimit: { limit: 1, windowMs: 60_000 } });
    await stack.gql<DomainData>(WEBSITE());
    const error = await errorOf(WEBSITE());
    expect(error.extensions?.code).toBe('RATE_LIMITED');
    expect(error.extensions?.retryAfter).toBeGreaterThan(0);
  });

  it('HTML 500: UPSTREAM_ERROR, and nothing of the page is shown', async () => {
    stack.sandbox.scriptFaults([{ kind: 'html500' }]);
    const error = await errorOf(WEBSITE());
    expect(error.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', upstreamStatus: 500 });
    expect(JSON.stringify(error)).not.toMatch(/<html|<!doctype/i);
    expect(stack.sandbox.log.count).toBe(1);
  });

  it('502 then 503 then success: retried, one result', async () => {
    stack.sandbox.scriptFaults([
      { kind: 'status', status: 502 },
      { kind: 'status', status: 503 },
    ]);
    const response = await stack.gql<DomainData>(WEBSITE());
    expect(dataOf(response).website?.domain).toMatch(/\./);
    expect(stack.sandbox.log.count).toBe(3);
  });

  it('503 on every attempt: UPSTREAM_ERROR after the configured attempts', async () => {
    stack.sandbox.scriptFaults([
      { kind: 'status', status: 503 },
      { kind: 'status', status: 503 },
      { kind: 'status', status: 503 },
    ]);
    expect((await errorOf(WEBSITE())).extensions).toMatchObject({ code: 'UPSTREAM_ERROR', upstreamStatus: 503 });
    expect(stack.sandbox.log.count).toBe(3);
  });

  it('a failing read asked twice in one request is sent once', async () => {
    stack.sandbox.scriptFaults([{ kind: 'html500' }]);
    const stat = `stats(websiteId: "${id}", name: PAGE, from: "2026-03-01", to: "2026-03-02") { totalCount }`;
    const response = await stack.gql<DomainData & { a: TotalCount; b: TotalCount }>(
      `{ website(id: "${id}") { domain } a: ${stat} b: ${stat} }`,
    );
    expect(response.errors?.length).toBeGreaterThan(0);
    for (const error of errorsOf(response)) expect(['UPSTREAM_ERROR']).toContain(error.extensions?.code);
    // One website read and one stats read, whichever of them the fault hit.
    expect(stack.sandbox.log.count).toBe(2);
  });

  it('a hanging upstream: UPSTREAM_TIMEOUT', async () => {
    stack.sandbox.scriptFaults([{ kind: 'hang' }]);
    const started = Date.now();
    expect((await errorOf(WEBSITE())).extensions?.code).toBe('UPSTREAM_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('malformed JSON: UPSTREAM_BAD_RESPONSE', async () => {
    stack.sandbox.scriptFaults([{ kind: 'malformed' }]);
    expect((await errorOf(WEBSITE())).extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
  });

  it('truncated JSON: UPSTREAM_BAD_RESPONSE', async () => {
    stack.sandbox.scriptFaults([{ kind: 'truncated' }]);
    expect((await errorOf(WEBSITE())).extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
  });

  it('a reset mid-body on a read is retried', async () => {
    stack.sandbox.scriptFaults([{ kind: 'reset' }]);
    const response = await stack.gql<DomainData>(WEBSITE());
    expect(response.errors).toBeUndefined();
    expect(stack.sandbox.log.count).toBe(2);
  });

  it('a write whose 2xx answer breaks off is not sent again: it is read back, and outcome APPLIED when that fails', async () => {
    // The scripted reset answers 200 without applying anything, so the read-back finds nothing.
    stack.sandbox.scriptFaults([{ kind: 'reset' }]);
    const response = await stack.gql<CreateWebsiteData<{ website: { id: string } | null }>>(
      'mutation { createWebsite(input: { domain: "reset-example.com" }) { website { id } } }',
    );
    const error = firstError(response);
    expect(error.extensions).toMatchObject({ code: 'UPSTREAM_BAD_RESPONSE', outcome: 'APPLIED' });
    expect(error.message).toContain('applied');
    expect(restCalls(stack.sandbox)).toEqual([
      'POST /api/v1/websites',
      'GET /api/v1/websites?page=1&per_page=100&search=reset-example.com&search_by=domain&sort=desc&sort_by=id',
    ]);
  });

  it('a write that times out is sent once and says the outcome is unknown', async () => {
    stack.sandbox.scriptFaults([{ kind: 'hang' }]);
    const response = await stack.gql<CreateWebsiteData<{ website: { id: string } | null }>>(
      'mutation { createWebsite(input: { domain: "slow-example.com" }) { website { id } } }',
    );
    const error = firstError(response);
    expect(error.extensions).toMatchObject({ code: 'UPSTREAM_TIMEOUT', outcome: 'UNKNOWN' });
    expect(error.message).toContain('may or may not');
    expect(stack.sandbox.log.entries.filter((e) => e.method === 'POST')).toHaveLength(1);
  });

  it('a body over the size cap: UPSTREAM_BAD_RESPONSE', async () => {
    stack.sandbox.scriptFaults([{ kind: 'oversize', bytes: 5 * 1024 * 1024 }]);
    const error = await errorOf(WEBSITE());
    expect(error.extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(error.message).toContain('limit');
  });

  it('a body the decoders cannot read: UPSTREAM_BAD_RESPONSE naming the path', async () => {
    stack.sandbox.scriptFaults([{ kind: 'status', status: 200, body: '{"data":{"id":"x","domain":"a.com"}}' }]);
    const error = await errorOf(WEBSITE());
    expect(error.extensions?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(error.message).toContain('id');
  });

  it('a 422 on a query: BAD_USER_INPUT with the field messages', async () => {
    stack.sandbox.scriptFaults([
      { kind: 'status', status: 422, body: '{"message":{"per_page":["The selected per page is invalid."]},"status":422}' },
    ]);
    const error = await errorOf(`{ stats(websiteId: "${id}", name: PAGE, from: "2026-03-01", to: "2026-03-02") { totalCount } }`);
    expect(error.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      upstreamStatus: 422,
      fieldErrors: { perPage: ['The selected per page is invalid.'] },
    });
    expect(error.message).toContain('The selected per page is invalid.');
  });

  it('a 422 in stock Laravel shape on a mutation: userErrors', async () => {
    stack.sandbox.scriptFaults([
      { kind: 'status', status: 422, body: '{"message":"The given data was invalid.","errors":{"exclude_ips":["Bad IP."]}}' },
    ]);
    const response = await stack.gql<CreateWebsiteData<{ website: { id: string } | null; userErrors: UserErrorData[] }>>(
      'mutation { createWebsite(input: { domain: "laravel-example.com" }) { website { id } userErrors { field message code } } }',
    );
    expect(dataOf(response).createWebsite).toEqual({
      website: null,
      userErrors: [{ field: ['input', 'excludeIps'], message: 'Bad IP.', code: 'BAD_USER_INPUT' }],
    });
  });
});

describe('unreachable upstream', () => {
  it('connection refused: UPSTREAM_UNAVAILABLE', async () => {
    // A port that was just free and is now closed: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const gateway = await createGateway(testConfig(`http://127.0.0.1:${port}`));
    try {
      const response = await postGraphQL<WebsiteResult<{ id: string }>>(
        `${gateway.url}/graphql`,
        { query: '{ website(id: "1") { id } }' },
        {
          authorization: `Bearer ${KEY_1}`,
        },
      );
      const error = firstError(response);
      expect(error.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(error.message).toBe('The analytics service cannot be reached.');
    } finally {
      await gateway.close();
    }
  });
});
