// The objects the HTTP layer makes for each request stay in V8's fast mode (test/v8.ts): the request's
// state and its slot, as serveHttp hands them to what answers the request,
// over real HTTP. That nothing later deletes a property of the state (a deleted property turns it into a
// dictionary as an accessor does) is biome's noDelete rule on src/ (biome.jsonc).
import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { serveHttp } from '../../src/http/server.js';
import { createEnding } from '../../src/http/answer.js';
import type { RequestState } from '../../src/request-state.js';
import { pino } from 'pino';
import { testConfig } from '../fixture.js';
import { hasFastProperties } from '../v8.js';

describe('per-request objects of the HTTP layer', () => {
  it('the check tells a dictionary-mode object (a literal with a getter) from a fast one', () => {
    let value = 1;
    expect(hasFastProperties({ value, answered: () => value++ })).toBe(true);
    expect(
      hasFastProperties({
        get value() {
          return value;
        },
      }),
    ).toBe(false);
  });

  it("a request's state and its slot are fast objects, answered or turned into a stream", async () => {
    const states: RequestState[] = [];
    const config = testConfig('http://127.0.0.1:9');
    const http = await serveHttp(
      (_req, _res: ServerResponse, state) => {
        states.push(state);
        if (states.length === 2) state.slot?.becomeStream(true);
        const facts = { operation: null, documentName: undefined, type: 'query' as const, errorCodes: [], usage: null, keyAccepted: true };
        return { status: 200, contentType: 'application/json', body: '{"data":{}}', data: '{}', facts };
      },
      createEnding({ cors: () => [], etagSecret: () => 'secret', costLimit: 100 }),
      { ...config, knownKeyMs: 60_000 },
      pino({ level: 'silent' }),
    );
    try {
      for (let i = 0; i < 2; i++) {
        const response = await request(`${http.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer sandbox-key-1' },
          body: JSON.stringify({ query: '{ __typename }' }),
        });
        expect(response.statusCode).toBe(200);
        await response.body.dump();
      }
    } finally {
      await http.close();
    }
    expect(states).toHaveLength(2);
    expect(states[1]?.slot?.stream).toBe(true);
    for (const state of states) {
      expect(hasFastProperties(state)).toBe(true);
      expect(state.slot && hasFastProperties(state.slot)).toBe(true);
    }
  });
});
