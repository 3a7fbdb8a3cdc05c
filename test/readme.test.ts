// The README's GraphQL examples run as written against the sandbox, as a user pasting them into
// GraphiQL would: every operation of every block, in the README's order and in reverse, each order
// twice on one sandbox, the id a create answered given to the operations that take `$id`. No
// example may depend on another having run or not: the queries answer data every time, the writes
// act only on websites the examples created, and the demo websites end as they began.
import { readFileSync } from 'node:fs';
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { KEY_1, dataOf, postGraphQL, startStack, type Stack, type UserErrorData } from './fixture.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const blocks = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');

interface Example {
  block: string;
  operation: OperationDefinitionNode;
  name: string;
}
const examples: Example[] = blocks.flatMap((block) =>
  parse(block)
    .definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
    .map((operation, i) => ({ block, operation, name: operation.name?.value ?? `anonymous ${i}` })),
);

/** How many counts, totals and sums above zero a response holds, at any depth. */
function figuresOf(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + figuresOf(item), 0);
  if (typeof value !== 'object' || value === null) return 0;
  return Object.entries(value).reduce(
    (sum, [name, field]) =>
      sum +
      (['count', 'total', 'totalCount', 'sum', 'visitors', 'pageviews'].includes(name) && typeof field === 'number' && field > 0
        ? 1
        : figuresOf(field)),
    0,
  );
}

interface Payload {
  website?: { id: string } | null;
  deletedId?: string | null;
  userErrors?: UserErrorData[];
}

/** What the user knows between operations: the id the latest create answered, and what was written. */
interface Session {
  createdId: string | undefined;
  deletedIds: Set<string>;
  /** Domains as the examples write them, of the creates that succeeded. */
  createdDomains: Set<string>;
}

/** The domain an operation creates, as written in it. */
function domainOf(example: Example): string | undefined {
  const { loc } = example.operation;
  return loc === undefined ? undefined : /domain: "([^"]+)"/.exec(example.block.slice(loc.start, loc.end))?.[1];
}

/** The userErrors a write may answer in a run of the examples, each caused by an earlier example's write. */
function expectedUserError(error: UserErrorData, id: string | undefined, session: Session, example: Example): boolean {
  // A create run again while its website exists (the README says so).
  if (error.code === 'BAD_USER_INPUT' && error.message === 'The domain has already been taken.') {
    const domain = domainOf(example);
    return domain !== undefined && session.createdDomains.has(domain);
  }
  // Favorite or Delete given the id of a website Delete already removed.
  return error.code === 'NOT_FOUND' && id !== undefined && session.deletedIds.has(id);
}

async function runExample(stack: Stack, example: Example, session: Session): Promise<void> {
  const { block, operation, name } = example;
  const takesId = (operation.variableDefinitions ?? []).map((definition) => definition.variable.name.value);
  expect(
    takesId.filter((variable) => variable !== 'id'),
    `${name}: variables the README does not explain`,
  ).toEqual([]);
  const id = takesId.includes('id') ? session.createdId : undefined;
  const body = { query: block, operationName: operation.name?.value, variables: id === undefined ? {} : { id } };

  if (block.includes('@defer') || block.includes('@stream')) {
    // Incremental delivery: read the whole multipart answer; no part may carry an error.
    const response = await fetch(stack.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', authorization: `Bearer ${KEY_1}` },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status, name).toBe(200);
    expect(text, name).toContain('"hasNext":false');
    expect(text, name).not.toContain('"errors"');
    return;
  }

  const response = await postGraphQL<Record<string, Payload>>(stack.endpoint, body, { authorization: `Bearer ${KEY_1}` });
  if (takesId.includes('id') && id === undefined) {
    // Nothing created yet, so no id to give: the user is told which variable is missing.
    expect(response.errors?.[0]?.message, name).toMatch(/Variable "\$id" of required type "ID!" was not provided/);
    return;
  }
  const data = dataOf(response);
  if (operation.operation === 'query') {
    // A query must return data, not only no errors: some figure above zero somewhere in it.
    expect(figuresOf(data), name).toBeGreaterThan(0);
    return;
  }
  for (const [field, payload] of Object.entries(data)) {
    const unexpected = (payload.userErrors ?? []).filter((error) => !expectedUserError(error, id, session, example));
    expect(unexpected, `${name}: ${field}`).toEqual([]);
    if (field === 'createWebsite' && payload.website) {
      session.createdId = payload.website.id;
      session.createdDomains.add(domainOf(example) ?? '');
    }
    if (typeof payload.deletedId === 'string') session.deletedIds.add(payload.deletedId);
  }
}

type WebsiteFields = { id: string } & Record<string, unknown>;

/** KEY_1's websites with every field the examples can change. */
async function websitesOfKey1(stack: Stack): Promise<WebsiteFields[]> {
  const query = '{ websites(perPage: 100) { nodes { id domain privacy favorite excludeIps excludeParams emailReports excludeBots } } }';
  const response = await postGraphQL<{ websites: { nodes: WebsiteFields[] } }>(
    stack.endpoint,
    { query },
    { authorization: `Bearer ${KEY_1}` },
  );
  return dataOf(response).websites.nodes;
}

describe('README examples', () => {
  it('has examples: queries and the writes', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    expect(examples.filter((example) => example.operation.operation === 'mutation').length).toBeGreaterThanOrEqual(3);
  });

  it.each([
    ["in the README's order", examples],
    ['in reverse', [...examples].reverse()],
  ])('run %s, twice, on one sandbox: every one answers, and the demo websites are untouched', async (_order, ordered) => {
    const stack = await startStack();
    try {
      const demo = await websitesOfKey1(stack);
      const demoIds = new Set(demo.map((website) => website.id));
      const session: Session = { createdId: undefined, deletedIds: new Set(), createdDomains: new Set() };
      for (let round = 1; round <= 2; round++) {
        for (const example of ordered) await runExample(stack, example, session);
      }
      expect(session.createdId, 'a create answered an id').toBeDefined();
      // Every write went to a website an example created (or to the collection), none to a demo website.
      const writes = stack.sandbox.log.entries.filter((entry) => entry.method !== 'GET');
      expect(writes.length).toBeGreaterThan(0);
      for (const write of writes) expect(demoIds, `${write.method} ${write.path}`).not.toContain(write.path.split('/')[4]);
      const after = await websitesOfKey1(stack);
      expect(after.filter((website) => demoIds.has(website.id))).toEqual(demo);
    } finally {
      await stack.close();
    }
  });
});
