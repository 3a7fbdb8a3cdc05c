// Every argument check runs before any resolver, over real HTTP against the sandbox: for each kind of
// argument, written in the document or given as a variable, at the top level, inside a website, inside
// a list of websites and in a fragment, one refused argument refuses the whole operation with no
// upstream call and no partial data, its error naming where it is, the value and what is allowed.
import { describe, expect, it } from 'vitest';
import { CREATE_WEBSITE, UPDATE_WEBSITE, dataOf, useStack, type GraphQLResponse, type WebsitePayloadData } from '../../fixture.js';

const stack = useStack();

/** A refused argument: how to write it in the document, and how to give it as the variable $v. */
interface Refused {
  kind: string;
  literal: string;
  variable: { args: string; type: string; value: unknown };
  argument: string;
  message: string;
}

/** Refused arguments of a statistic (Website.stats and Query.stats), each beside valid ones. */
const STAT_ARGUMENTS: Refused[] = [
  {
    kind: 'perPage',
    literal: 'name: PAGE, period: LAST_7_DAYS, perPage: 7',
    variable: { args: 'name: PAGE, period: LAST_7_DAYS, perPage: $v', type: 'Int', value: 7 },
    argument: 'perPage',
    message: 'perPage must be one of 10, 25, 50, 100, got 7.',
  },
  {
    kind: 'page',
    literal: 'name: PAGE, period: LAST_7_DAYS, page: 0',
    variable: { args: 'name: PAGE, period: LAST_7_DAYS, page: $v', type: 'Int', value: 0 },
    argument: 'page',
    message: 'page must be an integer from 1 to 1000000, got 0.',
  },
  {
    kind: 'search length',
    literal: `name: PAGE, period: LAST_7_DAYS, search: "${'x'.repeat(300)}"`,
    variable: { args: 'name: PAGE, period: LAST_7_DAYS, search: $v', type: 'String', value: 'x'.repeat(300) },
    argument: 'search',
    message: 'search must be at most 255 characters, got 300.',
  },
  {
    kind: 'dates out of order',
    literal: 'name: PAGE, from: "2026-03-02", to: "2026-03-01"',
    variable: { args: 'name: PAGE, from: "2026-03-02", to: $v', type: 'Date', value: '2026-03-01' },
    argument: 'to',
    message: 'to (2026-03-01) must be on or after from (2026-03-02).',
  },
  {
    kind: 'a period with dates',
    literal: 'name: PAGE, period: LAST_7_DAYS, from: "2026-03-01"',
    variable: { args: 'name: PAGE, period: $v, from: "2026-03-01"', type: 'Period', value: 'LAST_7_DAYS' },
    argument: 'period',
    message: 'Give either period or from and to, not both: got period LAST_7_DAYS with from 2026-03-01.',
  },
  {
    kind: 'a range without its end',
    literal: 'name: PAGE, from: "2026-03-01"',
    variable: { args: 'name: PAGE, from: $v', type: 'Date', value: '2026-03-01' },
    argument: 'to',
    message: 'Give both from and to (or a period): got from 2026-03-01 and no to.',
  },
];

/** Where the refused statistic sits: the document around it (ARGS its arguments) and its path in `data`. */
const PLACES = [
  {
    place: 'at the top level',
    document: '{ ok: website(id: "1") { id domain } bad: stats(websiteId: "1", ARGS) { totalCount } }',
    field: 'bad',
  },
  {
    place: 'inside website { stats }',
    document: `{ website(id: "1") { id domain
        visitors: stats(name: VISITOR, period: LAST_30_DAYS) { totalCount }
        bad: stats(ARGS) { totalCount }
        countries: stats(name: COUNTRY, period: LAST_30_DAYS) { totalCount } } }`,
    field: 'website.bad',
  },
  {
    place: 'inside websites { nodes { stats } }',
    document: '{ websites { totalCount nodes { id domain bad: stats(ARGS) { totalCount } } } }',
    field: 'websites.nodes.bad',
  },
  {
    place: 'in a fragment spread four times',
    document: `{ website(id: "1") { id ...Bad } again: website(id: "2") { ...Bad ...Bad } websites { nodes { ...Bad } } }
      fragment Bad on Website { domain bad: stats(ARGS) { totalCount } }`,
    // Where it is first spread; the fragment is checked once, so it is refused once.
    field: 'website.bad',
  },
];

/** The operation with `ARGS` replaced: written in the document, or as the variable $v. */
function operation(
  document: string,
  refused: Refused,
  form: 'literal' | 'variable',
): { query: string; variables: Record<string, unknown> } {
  if (form === 'literal') return { query: document.replace('ARGS', refused.literal), variables: {} };
  return {
    query: `query($v: ${refused.variable.type}) ${document.replace('ARGS', refused.variable.args)}`,
    variables: { v: refused.variable.value },
  };
}

/** Refused whole: no data at all, one error naming the field, the argument and the value, nothing sent upstream. */
function expectRefused(response: GraphQLResponse<unknown>, field: string, argument: string, message: string): void {
  expect(response.status).toBe(200);
  expect(response.data ?? null).toBeNull();
  expect(response.errors).toEqual([
    {
      message: `${field}: ${message}`,
      locations: [expect.objectContaining({ line: expect.any(Number), column: expect.any(Number) })],
      extensions: { code: 'BAD_USER_INPUT', argument, field },
    },
  ]);
  expect(response.extensions).toMatchObject({ upstreamCalls: 0, cost: { requested: 0 } });
  expect(stack.sandbox.log.count).toBe(0);
}

describe.each(PLACES)('a refused statistic argument $place', ({ document, field }) => {
  describe.each(STAT_ARGUMENTS)('$kind', (refused) => {
    it.each(['literal', 'variable'] as const)('%s: the operation is refused whole, before any upstream call', async (form) => {
      const { query, variables } = operation(document, refused, form);
      expectRefused(await stack.gql(query, variables), field, refused.argument, refused.message);
    });
  });
});

/** Refused arguments of the other fields that read: ids, lists of websites, series and summaries. */
const OTHER_ARGUMENTS: (Refused & { document: string; field: string })[] = [
  {
    kind: 'a website id',
    document: '{ websites { totalCount } website(ARGS) { id } }',
    literal: 'id: "1 OR 1=1"',
    variable: { args: 'id: $v', type: 'ID!', value: '1 OR 1=1' },
    argument: 'id',
    field: 'website',
    message: 'id must be a positive integer id, got "1 OR 1=1".',
  },
  {
    kind: "a statistic's website id",
    document: '{ website(id: "1") { id } stats(ARGS, name: PAGE, period: TODAY) { totalCount } }',
    literal: 'websiteId: "0"',
    variable: { args: 'websiteId: $v', type: 'ID!', value: '0' },
    argument: 'websiteId',
    field: 'stats',
    message: 'websiteId must be a positive integer id, got "0".',
  },
  {
    kind: 'a page size of websites, in a fragment on Query',
    document: '{ website(id: "1") { id } ...List } fragment List on Query { list: websites(ARGS) { totalCount } }',
    literal: 'perPage: 1000',
    variable: { args: 'perPage: $v', type: 'Int', value: 1000 },
    argument: 'perPage',
    field: 'list',
    message: 'perPage must be one of 10, 25, 50, 100, got 1000.',
  },
  {
    kind: 'a search of websites',
    document: '{ website(id: "1") { id } websites(ARGS) { totalCount } }',
    literal: `search: "${'y'.repeat(256)}"`,
    variable: { args: 'search: $v', type: 'String', value: 'y'.repeat(256) },
    argument: 'search',
    field: 'websites',
    message: 'search must be at most 255 characters, got 256.',
  },
  {
    kind: 'a series range, in a list of websites',
    document: '{ websites { nodes { id series(metric: VISITORS, ARGS) { total } } } }',
    literal: 'from: "2026-03-10", to: "2026-03-01"',
    variable: { args: 'from: $v, to: "2026-03-01"', type: 'Date', value: '2026-03-10' },
    argument: 'to',
    field: 'websites.nodes.series',
    message: 'to (2026-03-01) must be on or after from (2026-03-10).',
  },
  {
    kind: 'a summary range, in an inline fragment',
    document: '{ website(id: "1") { id ... on Website { summary(ARGS, compare: PREVIOUS_YEAR) { current { visitors } } } } }',
    literal: 'period: LAST_MONTH, to: "2026-03-01"',
    variable: { args: 'period: LAST_MONTH, to: $v', type: 'Date', value: '2026-03-01' },
    argument: 'period',
    field: 'website.summary',
    message: 'Give either period or from and to, not both: got period LAST_MONTH with to 2026-03-01.',
  },
];

describe.each(OTHER_ARGUMENTS)('$kind', (refused) => {
  it.each(['literal', 'variable'] as const)('%s: the operation is refused whole, before any upstream call', async (form) => {
    const { query, variables } = operation(refused.document, refused, form);
    expectRefused(await stack.gql(query, variables), refused.field, refused.argument, refused.message);
  });
});

describe('what the checks leave alone', () => {
  it('a field that @skip leaves out is not checked, as it does not run', async () => {
    const response = await stack.gql<{ website: { id: string } }>(
      'query($skip: Boolean!) { website(id: "1") { id bad: stats(name: PAGE, period: TODAY, perPage: 7) @skip(if: $skip) { totalCount } } }',
      { skip: true },
    );
    expect(dataOf(response)).toEqual({ website: { id: '1' } });
    const included = await stack.gql(
      'query($skip: Boolean!) { website(id: "1") { id bad: stats(name: PAGE, period: TODAY, perPage: 7) @skip(if: $skip) { totalCount } } }',
      { skip: false },
    );
    expect(included.errors?.map((error) => error.extensions?.field)).toEqual(['website.bad']);
  });

  it('a deferred statistic is checked with the rest: no first part is sent', async () => {
    const response = await stack.gql(
      '{ website(id: "1") { id ... @defer { bad: stats(name: PAGE, period: TODAY, perPage: 7) { totalCount } } } }',
    );
    expectRefused(response, 'website.bad', 'perPage', 'perPage must be one of 10, 25, 50, 100, got 7.');
  });

  it('every refused argument of the operation is named, each once', async () => {
    const response = await stack.gql(`{ a: website(id: "x") { id ...F } b: website(id: "1") { ...F } websites(page: 0) { totalCount } }
      fragment F on Website { s: stats(name: PAGE, period: TODAY, perPage: 7, page: -1) { totalCount } }`);
    expect(response.data ?? null).toBeNull();
    expect(response.errors?.map((error) => error.message)).toEqual([
      'a: id must be a positive integer id, got "x".',
      'a.s: perPage must be one of 10, 25, 50, 100, got 7.',
      'a.s: page must be an integer from 1 to 1000000, got -1.',
      'websites: page must be an integer from 1 to 1000000, got 0.',
    ]);
    expect(stack.sandbox.log.count).toBe(0);
  });

  it('an impossible date is refused by the Date scalar before execution, inside a website too: no partial data', async () => {
    const document =
      '{ website(id: "1") { id ok: stats(name: PAGE, period: TODAY) { totalCount } bad: stats(name: PAGE, from: DATE, to: "2026-03-01") { totalCount } } }';
    const literal = await stack.gql(document.replace('DATE', '"2026-02-30"'));
    const variable = await stack.gql(`query($d: Date) ${document.replace('DATE', '$d')}`, { d: '2026-02-30' });
    for (const response of [literal, variable]) {
      expect(response.data ?? null).toBeNull();
      expect(response.errors?.[0]?.message).toContain('real calendar date');
      expect(response.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect(stack.sandbox.log.count).toBe(0);
  });
});

describe('mutations: a refused argument is answered in the payload, and nothing is sent', () => {
  interface CreateData {
    createWebsite: WebsitePayloadData;
  }
  interface UpdateData {
    updateWebsite: WebsitePayloadData;
  }
  const SELECTION = 'website { id } userErrors { field message code }';

  it.each([
    [
      'a domain',
      { domain: 'not a domain' },
      ['input', 'domain'],
      'domain must be a domain name (example.com) or an IPv4 address; a scheme and "www." are stripped. Got "not a domain".',
    ],
    [
      'a password too long (its length only)',
      { domain: 'long-password.example.com', privacy: 'PASSWORD', password: 'p'.repeat(129) },
      ['input', 'password'],
      'password must be 1 to 128 characters, got 129.',
    ],
    [
      'a list too long',
      { domain: 'many-ips.example.com', excludeIps: Array.from({ length: 1001 }, (_, i) => `ip${i}`) },
      ['input', 'excludeIps'],
      'excludeIps may hold at most 1000 entries, got 1001.',
    ],
    [
      'a list entry of two lines',
      { domain: 'two-lines.example.com', excludeParams: ['utm_source', 'a\nb'] },
      ['input', 'excludeParams', '1'],
      'excludeParams[1] must be a non-empty single line of at most 255 characters, got "a\\nb".',
    ],
  ])(
    'createWebsite with %s, as a variable and written in the document, in a fragment on Mutation',
    async (_kind, input, field, message) => {
      const literalInput = JSON.stringify(input)
        .replace(/"(\w+)":/g, '$1: ')
        .replace(/"(PASSWORD)"/, '$1');
      const answers = [
        await stack.gql<CreateData>(CREATE_WEBSITE, { input }),
        await stack.gql<CreateData>(`mutation { createWebsite(input: ${literalInput}) { ${SELECTION} } }`),
        await stack.gql<CreateData>(
          `mutation { ...Create } fragment Create on Mutation { createWebsite(input: ${literalInput}) { ${SELECTION} } }`,
        ),
      ];
      for (const response of answers) {
        expect(response.errors).toBeUndefined();
        expect(dataOf(response).createWebsite).toEqual({ website: null, userErrors: [{ field, message, code: 'BAD_USER_INPUT' }] });
        expect(response.extensions).toMatchObject({ upstreamCalls: 0 });
      }
      expect(stack.sandbox.log.count).toBe(0);
    },
  );

  it('updateWebsite with a malformed id, as a variable and written in the document', async () => {
    const answers = [
      await stack.gql<UpdateData>(UPDATE_WEBSITE, { id: '1e3', input: { favorite: true } }),
      await stack.gql<UpdateData>(`mutation { updateWebsite(id: "1e3", input: { favorite: true }) { ${SELECTION} } }`),
    ];
    for (const response of answers) {
      expect(dataOf(response).updateWebsite.userErrors).toEqual([
        { field: ['id'], message: 'id must be a positive integer id, got "1e3".', code: 'BAD_USER_INPUT' },
      ]);
    }
    expect(stack.sandbox.log.count).toBe(0);
  });
});

describe('one "today" per operation', () => {
  // A clock a day later at every reading: were periods resolved at different instants of one
  // operation (as a request running across midnight would), each would land on another day.
  let reading = Date.parse('2026-03-14T12:00:00Z');
  const jumping = useStack({ gateway: { now: () => (reading += 86_400_000) } });

  it('the look-ahead, every resolver and every website of a list resolve a period to the same day', async () => {
    interface Range {
      range: { from: string; to: string };
    }
    const response = await jumping.gql<{
      website: { a: Range; b: Range; series: Range; summary: { current: Range } };
      websites: { nodes: { stats: Range }[] };
    }>(`{
      website(id: "1") {
        a: stats(name: VISITOR, period: TODAY) { range { from to } }
        b: stats(name: PAGE, period: TODAY) { range { from to } }
        series(metric: VISITORS, period: TODAY) { range { from to } }
        summary(period: TODAY) { current { range { from to } } }
      }
      websites { nodes { stats(name: VISITOR, period: TODAY) { range { from to } } } }
    }`);
    const { website, websites } = dataOf(response);
    const ranges = [website.a, website.b, website.series, website.summary.current, ...websites.nodes.map((node) => node.stats)].map(
      ({ range }) => range,
    );
    expect(ranges.length).toBeGreaterThan(5);
    expect(new Set(ranges.map((range) => `${range.from}..${range.to}`)).size).toBe(1);
  });
});
