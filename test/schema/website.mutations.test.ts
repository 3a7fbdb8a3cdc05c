import { beforeAll, describe, expect, it } from 'vitest';
import {
  CREATE_WEBSITE,
  DELETE_WEBSITE,
  KEY_2,
  UPDATE_WEBSITE,
  first,
  dataOf,
  firstError,
  restCalls,
  useStack,
  type Stack,
  type UserErrorData,
  type WebsiteData,
  type WebsitePayloadData,
} from '../fixture.js';

interface CreateData {
  createWebsite: WebsitePayloadData;
}
interface UpdateData {
  updateWebsite: WebsitePayloadData;
}
interface DeleteData {
  deleteWebsite: { deletedId: string | null; userErrors: UserErrorData[] };
}
interface FavoriteData {
  website: Pick<WebsiteData, 'favorite'> | null;
}

/** The website of a payload that must have one. */
function websiteOf(payload: WebsitePayloadData): WebsiteData {
  if (payload.website === null) throw new Error(`no website; userErrors: ${JSON.stringify(payload.userErrors)}`);
  return payload.website;
}

const stack = useStack();
const legacyStack = useStack({ sandbox: { dialect: 'legacy' } });

function lastForm(on: Stack = stack): Record<string, string> {
  const entry = on.sandbox.log.entries.at(-1);
  if (entry === undefined) throw new Error('the sandbox saw no request');
  expect(entry.headers['content-type']).toBe('application/x-www-form-urlencoded');
  return Object.fromEntries(new URLSearchParams(entry.body));
}

describe('createWebsite', () => {
  it('sends only the given fields and returns the stored website with the upstream defaults', async () => {
    const response = await stack.gql<CreateData>(CREATE_WEBSITE, { input: { domain: 'HTTPS://www.Minimal-Example.org/' } });
    expect(response.errors).toBeUndefined();
    const data = dataOf(response);
    expect(data.createWebsite.userErrors).toEqual([]);
    expect(data.createWebsite.website).toMatchObject({
      domain: 'minimal-example.org',
      privacy: 'PUBLIC',
      passwordProtected: false,
      emailReports: false,
      excludeBots: true,
      excludeParams: [],
      excludeIps: [],
      favorite: false,
    });
    expect(stack.sandbox.log.entries.map((e) => `${e.method} ${e.path}`)).toEqual(['POST /api/v1/websites']);
    expect(lastForm()).toEqual({ domain: 'minimal-example.org' });
  });

  it('encodes every field: privacy as 0/1/2, flags as 1/0, lists joined by newlines', async () => {
    const response = await stack.gql<CreateData>(CREATE_WEBSITE, {
      input: {
        domain: 'full-example.com',
        privacy: 'PASSWORD',
        password: 's3cret',
        emailReports: true,
        excludeBots: false,
        excludeParams: ['utm_source', 'fbclid'],
        excludeIps: ['10.0.0.1', '192.168.1.1'],
      },
    });
    expect(response.errors).toBeUndefined();
    expect(lastForm()).toEqual({
      domain: 'full-example.com',
      privacy: '2',
      password: 's3cret',
      email: '1',
      exclude_bots: '0',
      exclude_params: 'utm_source\nfbclid',
      exclude_ips: '10.0.0.1\n192.168.1.1',
    });
    expect(dataOf(response).createWebsite.website).toMatchObject({
      privacy: 'PASSWORD',
      passwordProtected: true,
      emailReports: true,
      excludeBots: false,
      excludeParams: ['utm_source', 'fbclid'],
      excludeIps: ['10.0.0.1', '192.168.1.1'],
    });
  });

  it('primes the by-id loader: reading the new website in the same request costs no call', async () => {
    const response = await stack.gql<CreateData>(CREATE_WEBSITE, { input: { domain: 'primed-example.com' } });
    expect(response.errors).toBeUndefined();
    expect(stack.sandbox.log.count).toBe(1);
    // And a later request sees it (per-request caches, real upstream state).
    const read = await stack.gql<{ website: Pick<WebsiteData, 'domain'> | null }>(
      `{ website(id: "${websiteOf(dataOf(response).createWebsite).id}") { domain } }`,
    );
    expect(dataOf(read).website?.domain).toBe('primed-example.com');
  });

  it('refuses a bad domain, a missing password and bad list entries before any upstream call', async () => {
    const response = await stack.gql<CreateData>(CREATE_WEBSITE, {
      input: { domain: 'not a domain', privacy: 'PASSWORD', excludeIps: ['1.2.3.4', 'two\nlines'] },
    });
    expect(response.errors).toBeUndefined();
    const data = dataOf(response);
    expect(data.createWebsite.website).toBeNull();
    expect(data.createWebsite.userErrors).toEqual([
      { field: ['input', 'domain'], message: expect.stringContaining('domain name'), code: 'BAD_USER_INPUT' },
      { field: ['input', 'password'], message: 'password is required when privacy is PASSWORD.', code: 'BAD_USER_INPUT' },
      { field: ['input', 'excludeIps', '1'], message: expect.stringContaining('single line'), code: 'BAD_USER_INPUT' },
    ]);
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('turns an upstream 422 into userErrors with schema field names', async () => {
    await stack.gql<CreateData>(CREATE_WEBSITE, { input: { domain: 'taken-example.com' } });
    const response = await stack.gql<CreateData>(CREATE_WEBSITE, { input: { domain: 'taken-example.com' } });
    expect(response.errors).toBeUndefined();
    expect(dataOf(response).createWebsite).toEqual({
      website: null,
      userErrors: [{ field: ['input', 'domain'], message: 'The domain has already been taken.', code: 'BAD_USER_INPUT' }],
    });
  });

  it("puts the install's validation messages in GraphQL terms: field names and enum names, not wire numbers", async () => {
    const body = JSON.stringify({
      message: {
        password: ['The password field is required when privacy is 2.'],
        exclude_ips: ['The exclude ips field must be a string.'],
      },
      status: 422,
    });
    stack.sandbox.scriptFaults([{ kind: 'status', status: 422, body }]);
    const response = await stack.gql<CreateData>(CREATE_WEBSITE, { input: { domain: 'terms-example.com', privacy: 'PRIVATE' } });
    expect(dataOf(response).createWebsite.userErrors).toEqual([
      { field: ['input', 'password'], message: 'The password field is required when privacy is PASSWORD.', code: 'BAD_USER_INPUT' },
      { field: ['input', 'excludeIps'], message: 'The excludeIps field must be a string.', code: 'BAD_USER_INPUT' },
    ]);
  });

  it('is never retried: a 503 on POST gives one POST and an UPSTREAM_ERROR', async () => {
    stack.sandbox.scriptFaults([{ kind: 'status', status: 503 }]);
    const response = await stack.gql<CreateData>(CREATE_WEBSITE, { input: { domain: 'once-example.com' } });
    expect(response.data).toBeNull();
    expect(firstError(response).extensions?.code).toBe('UPSTREAM_ERROR');
    expect(stack.sandbox.log.entries.filter((e) => e.method === 'POST')).toHaveLength(1);
  });
});

describe.each([
  ['contract', stack],
  ['legacy', legacyStack],
] as const)('updateWebsite to privacy PASSWORD without a password, on the %s install: the install decides', (dialect, on) => {
  async function created(input: Record<string, unknown>): Promise<string> {
    return websiteOf(dataOf(await on.gql<CreateData>(CREATE_WEBSITE, { input })).createWebsite).id;
  }

  it('is sent, and a website that has a password keeps it', async () => {
    const id = await created({ domain: `keeps-password-${dialect}.example.com`, privacy: 'PASSWORD', password: 's3cret' });
    dataOf(await on.gql<UpdateData>(UPDATE_WEBSITE, { id, input: { privacy: 'PRIVATE' } }));
    on.sandbox.log.reset();
    const response = await on.gql<UpdateData>(UPDATE_WEBSITE, { id, input: { privacy: 'PASSWORD' } });
    expect(dataOf(response).updateWebsite.userErrors).toEqual([]);
    expect(websiteOf(dataOf(response).updateWebsite)).toMatchObject({ privacy: 'PASSWORD', passwordProtected: true });
    expect(restCalls(on.sandbox)).toEqual([`PATCH /api/v1/websites/${id}`]);
    expect(lastForm(on)).toEqual({ privacy: '2' });
  });

  it('is sent, and refused by the install for a website without one: its 422 in userErrors, nothing changed', async () => {
    const id = await created({ domain: `no-password-${dialect}.example.com`, privacy: 'PRIVATE' });
    on.sandbox.log.reset();
    const response = await on.gql<UpdateData>(UPDATE_WEBSITE, { id, input: { privacy: 'PASSWORD' } });
    expect(dataOf(response).updateWebsite).toEqual({
      website: null,
      userErrors: [
        { field: ['input', 'password'], message: 'The password field is required when privacy is PASSWORD.', code: 'BAD_USER_INPUT' },
      ],
    });
    expect(restCalls(on.sandbox)).toEqual([`PATCH /api/v1/websites/${id}`]);
    const after = await on.gql<{ website: Pick<WebsiteData, 'privacy' | 'passwordProtected'> | null }>(
      `{ website(id: "${id}") { privacy passwordProtected } }`,
    );
    expect(dataOf(after).website).toEqual({ privacy: 'PRIVATE', passwordProtected: false });
  });

  it('create still needs the password, checked by the gateway: no upstream call', async () => {
    const response = await on.gql<CreateData>(CREATE_WEBSITE, {
      input: { domain: `create-password-${dialect}.example.com`, privacy: 'PASSWORD' },
    });
    expect(dataOf(response).createWebsite).toEqual({
      website: null,
      userErrors: [{ field: ['input', 'password'], message: 'password is required when privacy is PASSWORD.', code: 'BAD_USER_INPUT' }],
    });
    expect(on.sandbox.log.count).toBe(0);
  });
});

describe('updateWebsite', () => {
  let id: string;
  beforeAll(async () => {
    const response = await stack.gql<CreateData>(CREATE_WEBSITE, {
      input: { domain: 'update-example.com', excludeParams: ['a', 'b'], emailReports: true },
    });
    id = websiteOf(dataOf(response).createWebsite).id;
  });

  it('PATCHes only the given fields and leaves the others alone', async () => {
    const response = await stack.gql<UpdateData>(UPDATE_WEBSITE, { id, input: { favorite: true, privacy: 'PRIVATE' } });
    expect(response.errors).toBeUndefined();
    expect(stack.sandbox.log.entries.map((e) => `${e.method} ${e.path}`)).toEqual([`PATCH /api/v1/websites/${id}`]);
    expect(lastForm()).toEqual({ favorite: '1', privacy: '1' });
    expect(dataOf(response).updateWebsite.website).toMatchObject({
      domain: 'update-example.com',
      privacy: 'PRIVATE',
      favorite: true,
      emailReports: true,
      excludeParams: ['a', 'b'],
    });
  });

  it('clears a list with an empty list (an empty form value)', async () => {
    const response = await stack.gql<UpdateData>(UPDATE_WEBSITE, { id, input: { excludeParams: [] } });
    expect(lastForm()).toEqual({ exclude_params: '' });
    expect(websiteOf(dataOf(response).updateWebsite).excludeParams).toEqual([]);
  });

  it('treats null fields as not given, and refuses an input that changes nothing', async () => {
    const response = await stack.gql<UpdateData>(UPDATE_WEBSITE, { id, input: { favorite: null } });
    expect(dataOf(response).updateWebsite.userErrors).toEqual([
      { field: ['input'], message: 'input must set at least one field.', code: 'BAD_USER_INPUT' },
    ]);
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('reports an unknown or foreign website as a NOT_FOUND userError', async () => {
    const foreign = await stack.gql<{ websites: { nodes: Pick<WebsiteData, 'id'>[] } }>('{ websites { nodes { id } } }', {}, KEY_2);
    const otherId = first(dataOf(foreign).websites.nodes).id;
    const before = await stack.gql<FavoriteData>(`{ website(id: "${otherId}") { favorite } }`, {}, KEY_2);
    const beforeWebsite = dataOf(before).website;
    if (beforeWebsite === null) throw new Error(`KEY_2 cannot read website ${otherId}`);
    const response = await stack.gql<UpdateData>(UPDATE_WEBSITE, { id: otherId, input: { favorite: !beforeWebsite.favorite } });
    expect(dataOf(response).updateWebsite).toEqual({
      website: null,
      userErrors: [{ field: ['id'], message: `No website with id ${otherId}.`, code: 'NOT_FOUND' }],
    });
    const check = await stack.gql<FavoriteData>(`{ website(id: "${otherId}") { favorite } }`, {}, KEY_2);
    expect(dataOf(check).website?.favorite).toBe(beforeWebsite.favorite);
  });

  it('refuses a malformed id before any upstream call', async () => {
    const response = await stack.gql<UpdateData>(UPDATE_WEBSITE, { id: '12abc', input: { favorite: true } });
    expect(dataOf(response).updateWebsite.userErrors).toEqual([
      { field: ['id'], message: 'id must be a positive integer id, got "12abc".', code: 'BAD_USER_INPUT' },
    ]);
    expect(stack.sandbox.log.count).toBe(0);
  });
});

describe('deleteWebsite', () => {
  it('DELETEs, returns the id, and the website is gone', async () => {
    const created = await stack.gql<CreateData>(CREATE_WEBSITE, { input: { domain: 'delete-example.com' } });
    const id = websiteOf(dataOf(created).createWebsite).id;
    stack.sandbox.log.reset();
    const response = await stack.gql<DeleteData>(DELETE_WEBSITE, { id });
    expect(response.errors).toBeUndefined();
    expect(dataOf(response).deleteWebsite).toEqual({ deletedId: id, userErrors: [] });
    expect(stack.sandbox.log.entries.map((e) => `${e.method} ${e.path}`)).toEqual([`DELETE /api/v1/websites/${id}`]);
    const after = await stack.gql<{ website: Pick<WebsiteData, 'id'> | null }>(`{ website(id: "${id}") { id } }`);
    expect(firstError(after).extensions?.code).toBe('NOT_FOUND');
  });

  it('reports an unknown id as a NOT_FOUND userError', async () => {
    const response = await stack.gql<DeleteData>(DELETE_WEBSITE, { id: '987654' });
    expect(dataOf(response).deleteWebsite).toEqual({
      deletedId: null,
      userErrors: [{ field: ['id'], message: 'No website with id 987654.', code: 'NOT_FOUND' }],
    });
  });
});

describe('a refused argument in a mutation: nothing is written', () => {
  const PAYLOAD = 'website { id } userErrors { field message code }';
  interface TwoWrites {
    a: WebsitePayloadData;
    b: WebsitePayloadData;
  }
  const notSent = (by: string, argument: string): UserErrorData => ({
    field: null,
    message: `Not sent: ${by} has a refused argument (${argument}), so no write of this operation was sent.`,
    code: 'BAD_USER_INPUT',
  });

  it('written in the document: the refused write says why in its userErrors, the others that they were not sent', async () => {
    const response = await stack.gql<TwoWrites>(`mutation {
      a: createWebsite(input: { domain: "first-of-two.example.com" }) { ${PAYLOAD} }
      b: createWebsite(input: { domain: "not a domain" }) { ${PAYLOAD} }
    }`);
    expect(response.errors).toBeUndefined();
    expect(dataOf(response)).toEqual({
      a: { website: null, userErrors: [notSent('b', 'input.domain')] },
      b: {
        website: null,
        userErrors: [{ field: ['input', 'domain'], message: expect.stringContaining('Got "not a domain".'), code: 'BAD_USER_INPUT' }],
      },
    });
    expect(stack.sandbox.log.count).toBe(0);
    expect(response.extensions).toMatchObject({ upstreamCalls: 0 });
  });

  it('from variables, a refused update after a delete: the delete is not sent', async () => {
    const created = await stack.gql<CreateData>(CREATE_WEBSITE, { input: { domain: 'kept-by-refusal.example.com' } });
    const id = websiteOf(dataOf(created).createWebsite).id;
    stack.sandbox.log.reset();
    const response = await stack.gql<{ gone: { deletedId: string | null; userErrors: UserErrorData[] }; b: WebsitePayloadData }>(
      `mutation($id: ID!, $other: ID!, $ips: [String!]) {
        gone: deleteWebsite(id: $id) { deletedId userErrors { field message code } }
        b: updateWebsite(id: $other, input: { excludeIps: $ips }) { ${PAYLOAD} }
      }`,
      { id, other: id, ips: Array.from({ length: 1001 }, (_, i) => `10.0.${Math.floor(i / 256)}.${i % 256}`) },
    );
    expect(dataOf(response)).toEqual({
      gone: { deletedId: null, userErrors: [notSent('b', 'input.excludeIps')] },
      b: {
        website: null,
        userErrors: [
          { field: ['input', 'excludeIps'], message: 'excludeIps may hold at most 1000 entries, got 1001.', code: 'BAD_USER_INPUT' },
        ],
      },
    });
    expect(stack.sandbox.log.count).toBe(0);
    const still = await stack.gql<{ website: Pick<WebsiteData, 'id'> | null }>(`{ website(id: "${id}") { id } }`);
    expect(dataOf(still).website).toEqual({ id });
  });

  it('a refused argument of a read in a payload refuses the whole operation before the write', async () => {
    const response = await stack.gql<{ createWebsite: unknown }>(
      `mutation($n: Int) { createWebsite(input: { domain: "never-written.example.com" }) { website { id } query { websites(perPage: $n) { totalCount } } } }`,
      { n: 7 },
    );
    expect(response.data ?? null).toBeNull();
    expect(response.errors?.map((error) => error.message)).toEqual([
      'createWebsite.query.websites: perPage must be one of 10, 25, 50, 100, got 7.',
    ]);
    expect(stack.sandbox.log.count).toBe(0);
    const search = await stack.gql<{ websites: { totalCount: number } }>('{ websites(search: "never-written") { totalCount } }');
    expect(dataOf(search).websites.totalCount).toBe(0);
  });
});
