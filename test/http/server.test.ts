// The HTTP layer's own answers, before GraphQL runs: the root redirects to GraphiQL.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/http/server.js';
import { testConfig } from '../fixture.js';

let gateway: Gateway;
beforeAll(async () => {
  // No upstream call is made by these tests; any URL will do.
  gateway = await createGateway(testConfig('http://127.0.0.1:9'));
});
afterAll(() => gateway.close());

describe('GET /', () => {
  it.each(['GET', 'HEAD'] as const)('%s / redirects to /graphql', async (method) => {
    const response = await request(`${gateway.url}/`, { method });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/graphql');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    await response.body.dump();
  });

  it('other paths are not redirected', async () => {
    const response = await request(`${gateway.url}/elsewhere`);
    expect(response.statusCode).toBe(404);
    await response.body.dump();
  });
});
