// FEDERATION=on straight to the gateway, as a router speaks to it: `_service { sdl }` is the checked-in
// schema.subgraph.graphql, and `_entities` keeps the rules of nodes(ids:) (the caller's key, one read per
// distinct id, the read cache, at most 100 representations, one unit of cost each, NOT_FOUND for what the
// caller has not). With FEDERATION off neither field exists. The router itself: test/federation/router.test.ts.
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { planRequest } from '../../src/schema/plan.js';
import { MAX_ENTITY_REPRESENTATIONS } from '../../src/schema/federation.js';
import { subgraphSchema } from '../../src/schema/index.js';
import { KEY_2, type Stack, dataOf, errorsOf, firstError, restCalls, useStack } from '../fixture.js';

interface EntityData {
  __typename: string;
  id?: string;
  domain?: string;
}
type Entities = { _entities: (EntityData | null)[] };

const ENTITIES =
  'query($representations: [_Any!]!) { _entities(representations: $representations) { __typename ... on Website { id domain } } }';
const websites = (...ids: string[]) => ids.map((id) => ({ __typename: 'Website', id }));

describe('FEDERATION off (the default)', () => {
  const stack = useStack();

  it('has neither _service nor _entities', async () => {
    for (const query of ['{ _service { sdl } }', '{ _entities(representations: []) { __typename } }']) {
      const error = firstError(await stack.gql(query));
      expect(error.message, query).toMatch(/^Cannot query field "_(service|entities)" on type "Query"\./);
    }
  });
});

describe('FEDERATION=on', () => {
  const stack = useStack({ env: { FEDERATION: 'on' } });

  it('answers _service { sdl } with schema.subgraph.graphql, without a key and without an upstream call', async () => {
    const checkedIn = readFileSync(new URL('../../schema.subgraph.graphql', import.meta.url), 'utf8');
    const response = await stack.gql<{ _service: { sdl: string } }>('{ _service { sdl } }', {}, null);
    expect(dataOf(response)._service.sdl).toBe(checkedIn);
    expect(checkedIn).toContain('type Website implements Node @key(fields: "id")');
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('reads the entities in the order asked, each distinct id once: 50 representations of 3 ids cost 3 website reads', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => ['1', '2', '8'][i % 3] as string);
    const response = await stack.gql<Entities>(ENTITIES, { representations: websites(...ids) });
    const entities = dataOf(response)._entities;
    expect(entities.map((entity) => entity?.id)).toEqual(ids);
    expect(entities.every((entity) => entity?.__typename === 'Website' && typeof entity.domain === 'string')).toBe(true);
    expect(restCalls(stack.sandbox).sort()).toEqual(['GET /api/v1/websites/1', 'GET /api/v1/websites/2', 'GET /api/v1/websites/8']);
    // The cost counts every representation, as nodes(ids:) counts every id.
    expect(response.extensions).toMatchObject({ cost: { requested: 50 }, upstreamCalls: 3 });
  });

  it("answers null with a NOT_FOUND error, and no data, for another user's website and an unknown id", async () => {
    const response = await stack.gql<Entities>(ENTITIES, { representations: websites('2', '3', '999999') });
    expect(response.data?._entities).toEqual([expect.objectContaining({ id: '2' }), null, null]);
    const errors = errorsOf(response);
    expect(errors.map((error) => [error.path, error.extensions?.code])).toEqual([
      [['_entities', 1], 'NOT_FOUND'],
      [['_entities', 2], 'NOT_FOUND'],
    ]);
    // Website 3 is KEY_2's: with that key it is answered.
    const own = await stack.gql<Entities>(ENTITIES, { representations: websites('3') }, KEY_2);
    expect(dataOf(own)._entities).toEqual([expect.objectContaining({ id: '3' })]);
  });

  it('answers UNAUTHENTICATED without a key, with no upstream call', async () => {
    const response = await stack.gql<Entities>(ENTITIES, { representations: websites('1', '2') }, null);
    expect(response.data?._entities).toEqual([null, null]);
    expect(errorsOf(response).map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED']);
    expect(stack.sandbox.log.count).toBe(0);
  });

  it(`refuses more than ${MAX_ENTITY_REPRESENTATIONS} representations, or one that is no Website key, before any call`, async () => {
    const refusals: [unknown[], string][] = [
      [
        websites(...Array.from({ length: MAX_ENTITY_REPRESENTATIONS + 1 }, () => '1')),
        `_entities: representations may hold at most ${MAX_ENTITY_REPRESENTATIONS} entities, got ${MAX_ENTITY_REPRESENTATIONS + 1}.`,
      ],
      [
        [...websites('1'), { __typename: 'Invoice', id: '1' }],
        '_entities: representations.1 must be a Website\'s key, { __typename: "Website", id }, got {"__typename":"Invoice","id":"1"}.',
      ],
      [websites('1', 'V2Vic2l0ZTox'), '_entities: representations.1.id must be a positive integer id, got "V2Vic2l0ZTox".'],
      [[{ __typename: 'Website', id: 7 }], '_entities: representations.0.id must be a positive integer id as a string, got 7.'],
    ];
    for (const [representations, message] of refusals) {
      const response = await stack.gql<Entities>(ENTITIES, { representations });
      expect(response.data, message).toBeUndefined();
      expect(firstError(response)).toMatchObject({ message, extensions: { code: 'BAD_USER_INPUT', field: '_entities' } });
    }
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('counts what is under each entity once per representation, as under nodes(ids:)', () => {
    const { schema } = subgraphSchema();
    const document = parse(
      'query($r: [_Any!]!) { _entities(representations: $r) { __typename ... on Website { domain stats(name: PAGE, period: TODAY) { totalCount } } } _service { sdl } }',
    );
    expect(planRequest(schema, document, undefined, { r: websites('1', '2', '1') }, {})?.cost()).toBe(6);
    expect(planRequest(schema, parse('{ _service { sdl } }'), undefined, {}, {})?.cost()).toBe(0);
  });
});

describe('FEDERATION=on in production: _service follows introspection', () => {
  const production = useStack({ env: { FEDERATION: 'on', NODE_ENV: 'production' } });
  const opened = useStack({ env: { FEDERATION: 'on', NODE_ENV: 'production', INTROSPECTION: 'on' } });

  it('refuses _service { sdl } as it refuses __schema, with a key or without, and still answers _entities', async () => {
    for (const key of [null, undefined]) {
      const response = await production.gql<{ _service?: { sdl: string } }>('{ _service { sdl } }', {}, key);
      expect(response.data).toBeUndefined();
      expect(errorsOf(response).map((error) => error.message)).toEqual([
        'GraphQL introspection has been disabled, but the requested query contained the field "_service".',
      ]);
      expect(JSON.stringify(response)).not.toContain('type Website');
      const schema = await production.gql('{ __schema { types { name } } }', {}, key);
      expect(firstError(schema).message).toMatch(/introspection has been disabled/);
    }
    const entities = await production.gql<Entities>(ENTITIES, { representations: websites('1') });
    expect(dataOf(entities)._entities.map((entity) => entity?.id)).toEqual(['1']);
    expect(production.sandbox.log.count).toBe(1);
  });

  it('answers it with INTROSPECTION=on, for a composition tool that reads it', async () => {
    const checkedIn = readFileSync(new URL('../../schema.subgraph.graphql', import.meta.url), 'utf8');
    const response = await opened.gql<{ _service: { sdl: string } }>('{ _service { sdl } }', {}, null);
    expect(dataOf(response)._service.sdl).toBe(checkedIn);
  });
});

describe('FEDERATION=on with the read cache', () => {
  // Compiled by graphql-jit from the first run (as testConfig sets it, said here for the test below).
  const stack = useStack({ env: { FEDERATION: 'on', CACHE: 'on', GRAPHQL_JIT_ON_RUN: '1' } });

  it('answers entities read by an earlier request from the cache, as website(id:) would be', async () => {
    const first = await stack.gql<Entities>(ENTITIES, { representations: websites('1', '2', '1') });
    expect(dataOf(first)._entities.map((entity) => entity?.id)).toEqual(['1', '2', '1']);
    expect(stack.sandbox.log.count).toBe(2);
    stack.sandbox.log.reset();
    const again = await stack.gql<Entities>(ENTITIES, { representations: websites('2', '1') });
    expect(dataOf(again)._entities).toEqual([dataOf(first)._entities[1], dataOf(first)._entities[0]]);
    expect(stack.sandbox.log.count).toBe(0);
    expect(again.extensions).toMatchObject({ upstreamCalls: 0, cache: { hits: 2 } });
  });

  it('answers one entry per representation, in order, compiled by graphql-jit, whichever entities fail and whenever', () =>
    exactEntities(stack));
});

describe('FEDERATION=on with the read cache, graphql-jit off', () => {
  const stack = useStack({ env: { FEDERATION: 'on', CACHE: 'on', GRAPHQL_JIT_ON_RUN: '0' } });

  it('answers one entry per representation, in order, on the standard executor', () => exactEntities(stack));
});

/** [3,1,6,2] three times, 1 and 2 from the cache, another user's 3 and 6 not: one entry each, in order. */
async function exactEntities(stack: Stack): Promise<void> {
  // As a router asks (no __typename).
  const query = 'query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Website { id } } }';
  await stack.gql(query, { representations: websites('1', '2') });
  for (let run = 0; run < 3; run++) {
    const response = await stack.gql<Entities>(query, { representations: websites('3', '1', '6', '2') });
    expect(response.data?._entities, `run ${run}`).toEqual([null, { id: '1' }, null, { id: '2' }]);
    expect(errorsOf(response).map((error) => [error.path, error.extensions?.code])).toEqual([
      [['_entities', 0], 'NOT_FOUND'],
      [['_entities', 2], 'NOT_FOUND'],
    ]);
  }
}
