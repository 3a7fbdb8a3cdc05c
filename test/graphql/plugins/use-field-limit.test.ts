// The expanded-field limit: a short document that stands for an enormous one (fragments that each
// spread the next one twice) is refused before validation, on every run, with or without a key, and
// the process stays responsive; the count itself visits each fragment once.
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { expandedFieldCount } from '../../../src/schema/plan.js';
import { KEY_1, dataOf, firstError, useStack } from '../../fixture.js';

/** `levels` fragments, each spreading the next one twice: 2^levels - 1 fields once expanded (plus the top). */
function doublingChain(levels: number, top: 'website' | 'list' = 'website', inner = 'id'): string {
  const fragments = Array.from({ length: levels }, (_, i) =>
    i + 1 < levels ? `fragment F${i} on Website { ${inner} ...F${i + 1} ...F${i + 1} }` : `fragment F${i} on Website { ${inner} }`,
  );
  const selection = top === 'website' ? 'website(id: "1") { ...F0 }' : 'websites { nodes { ...F0 } }';
  return `query Chain { ${selection} } ${fragments.join(' ')}`;
}

describe('expandedFieldCount', () => {
  it('counts every field once per place a spread puts it', () => {
    const document = parse(`
      query A { website(id: "1") { id ...W ... on Website { domain } } b: website(id: "2") { ...W } }
      fragment W on Website { id favorite stats(name: PAGE) { totalCount } }
    `);
    // A: website + id + (W: 4) + domain; b: website + (W: 4)
    expect(expandedFieldCount(document)).toBe(1 + 1 + 4 + 1 + 1 + 4);
  });

  it('adds up every operation of the document', () => {
    expect(expandedFieldCount(parse('query A { websites { totalCount } } query B { website(id: "1") { id } }'))).toBe(4);
  });

  it('counts 2^n fields for a doubling chain of n fragments, without expanding it', () => {
    // 60 levels: 2^60 fields, far past what expanding could count in any time.
    expect(expandedFieldCount(parse(doublingChain(60)))).toBe(2 ** 60);
    expect(expandedFieldCount(parse(doublingChain(10)))).toBe(2 ** 10);
  });

  it('counts a cyclic or unknown spread as nothing (validation refuses both)', () => {
    expect(
      expandedFieldCount(
        parse('{ website(id: "1") { ...A ...Missing } } fragment A on Website { id ...B } fragment B on Website { domain ...A }'),
      ),
    ).toBe(3);
  });
});

describe('MAX_FIELDS over HTTP', () => {
  const stack = useStack();
  const low = useStack({ env: { MAX_FIELDS: '20', GRAPHQL_JIT_ON_RUN: '2' } });
  const high = useStack({ env: { MAX_FIELDS: '100000', MAX_COST: '100000', GRAPHQL_JIT_ON_RUN: '2' } });

  for (const top of ['website', 'list'] as const) {
    it(`refuses a 30-level doubling chain under ${top} on every run, with and without a key, and makes no upstream call`, async () => {
      const query = doublingChain(30, top);
      for (const key of [null, KEY_1]) {
        for (let run = 1; run <= 3; run++) {
          const response = await stack.gql(query, undefined, key);
          const error = firstError(response);
          expect(error.extensions).toMatchObject({ code: 'FIELD_LIMIT_EXCEEDED', fieldLimit: 1000 });
          // 2^30 - 1 in the chain, plus website (or websites and nodes)
          expect(error.message).toContain(top === 'website' ? '1,073,741,824 fields' : '1,073,741,825 fields');
          expect(error.message).toContain('the limit is 1000 (MAX_FIELDS)');
          expect(response.data ?? null).toBeNull();
        }
      }
      expect(stack.sandbox.log.count).toBe(0);
      // The process was never blocked: the health check answers.
      expect((await fetch(`${stack.gateway.url}/health`)).status).toBe(200);
    });
  }

  it('refuses a 60-level chain as well (the count does not grow with the expansion)', async () => {
    const error = firstError(await stack.gql(doublingChain(60), undefined, null));
    expect(error.extensions?.code).toBe('FIELD_LIMIT_EXCEEDED');
    expect(error.message).toContain('more than 9,007,199,254,740,991 fields');
  });

  it('runs a document at the limit and refuses one past it', async () => {
    // website + id + domain + 17 aliased ids = 20 fields
    const at = `{ website(id: "1") { id domain ${Array.from({ length: 17 }, (_, i) => `i${i}: id`).join(' ')} } }`;
    expect(dataOf(await low.gql<{ website: { id: string } }>(at)).website.id).toBe('1');
    const past = at.replace('domain', 'domain favorite');
    const error = firstError(await low.gql(past));
    expect(error.extensions).toMatchObject({ code: 'FIELD_LIMIT_EXCEEDED', fieldLimit: 20 });
  });

  it('with the limit raised, a chain of statistics runs on its first and compiled runs with one read per distinct statistic', async () => {
    // 12 levels of one statistic each: 4,095 stats fields expanded, all the same read.
    const query = doublingChain(12, 'website', 'id stats(name: PAGE, period: LAST_7_DAYS) { totalCount }');
    for (let run = 1; run <= 2; run++) {
      high.sandbox.log.reset();
      const response = await high.gql<{ website: { id: string; stats: { totalCount: number } } }>(query);
      expect(dataOf(response).website.stats.totalCount).toBeGreaterThan(0);
      expect(high.sandbox.log.count).toBe(2); // the website and the one page
    }
  });
});
