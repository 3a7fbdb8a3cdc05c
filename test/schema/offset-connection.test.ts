// The cursor connection's arithmetic, tested directly: which upstream pages hold a window, what a
// cursor holds and when it is refused, and whole lists paged through with an in-memory reader of pages
// that answers as the install's paginator does (the same over HTTP: website-connection.test.ts).
import { describe, expect, it } from 'vitest';
import type { Page } from '../../src/domain.js';
import {
  connectionArgsProblems,
  connectionCost,
  listFingerprint,
  offsetConnection,
  pagesCovering,
  toCursor,
  windowOf,
  type ConnectionArgs,
  type OffsetConnection,
  type PageRead,
} from '../../src/schema/offset-connection.js';

const SIZES = [10, 25, 50, 100];
const LIST = listFingerprint(['test', null]);
const OTHER = listFingerprint(['test', 'other']);
const ARGS = 'search or sort arguments';

describe('pagesCovering', () => {
  it.each([
    [0, 7, [{ perPage: 10, page: 1 }]],
    [0, 12, [{ perPage: 25, page: 1 }]],
    [0, 25, [{ perPage: 25, page: 1 }]],
    [0, 100, [{ perPage: 100, page: 1 }]],
    [20, 32, [{ perPage: 50, page: 1 }]],
    [
      95,
      107,
      [
        { perPage: 10, page: 10 },
        { perPage: 10, page: 11 },
      ],
    ],
    [
      5,
      105,
      [
        { perPage: 100, page: 1 },
        { perPage: 100, page: 2 },
      ],
    ],
    [7, 7, [{ perPage: 10, page: 1 }]],
  ])('[%i, %i): %j', (start, end, reads) => {
    expect(pagesCovering({ start, end })).toEqual(reads);
  });

  it('holds every window of 1 to 100 items from offsets 0 to 400 in at most 2 pages, and in 1 whenever one page can', () => {
    const wrong: string[] = [];
    for (let start = 0; start <= 400; start++) {
      for (let size = 1; size <= 100; size++) {
        const end = start + size;
        const reads = pagesCovering({ start, end });
        const spans = reads.map(({ perPage, page }) => [(page - 1) * perPage, page * perPage] as const);
        // Held: the first page starts at or before `start`, each next one starts where the last ended, the last reaches `end`.
        const held =
          spans.length > 0 &&
          spans[0]![0] <= start &&
          spans.at(-1)![1] >= end &&
          spans.every((span, i) => i === 0 || span[0] === spans[i - 1]![1]);
        const onePageCan = SIZES.some((perPage) => Math.floor(start / perPage) === Math.floor((end - 1) / perPage));
        if (!held || reads.length !== (onePageCan ? 1 : 2)) wrong.push(`[${start}, ${end}): ${JSON.stringify(reads)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe('windowOf', () => {
  it('first counts from `lower`, up to `upper` when there is one', () => {
    expect(windowOf({ first: 5 }, 0, undefined)).toEqual({ start: 0, end: 5 });
    expect(windowOf({ first: 5 }, 3, 6)).toEqual({ start: 3, end: 6 });
    expect(windowOf({ first: 5 }, 8, 6)).toEqual({ start: 8, end: 8 });
  });

  it('last counts back from `upper`, down to `lower`', () => {
    expect(windowOf({ last: 5 }, 0, 20)).toEqual({ start: 15, end: 20 });
    expect(windowOf({ last: 5 }, 18, 20)).toEqual({ start: 18, end: 20 });
    expect(windowOf({ last: 5 }, 0, 3)).toEqual({ start: 0, end: 3 });
    expect(windowOf({ last: 5 }, 25, 20)).toEqual({ start: 20, end: 20 });
  });
});

describe('connectionArgsProblems', () => {
  const problems = (args: ConnectionArgs) => connectionArgsProblems(args, LIST, ARGS);

  it('accepts first or last from 1 to 100, with cursors of the same list', () => {
    expect(problems({ first: 1 })).toEqual([]);
    expect(problems({ last: 100, before: toCursor(3, LIST) })).toEqual([]);
    expect(problems({ first: 10, after: toCursor(0, LIST), before: toCursor(40, LIST) })).toEqual([]);
  });

  it('wants first or last, one of them, from 1 to 100', () => {
    expect(problems({})).toEqual([{ field: ['first'], message: 'Give first or last (1 to 100): how many items the page holds.' }]);
    expect(problems({ first: 3, last: 3 })).toEqual([
      { field: ['last'], message: 'Give first or last, not both: got first 3 and last 3.' },
    ]);
    expect(problems({ first: 0 })).toEqual([{ field: ['first'], message: 'first must be an integer from 1 to 100, got 0.' }]);
    expect(problems({ last: 101 })).toEqual([{ field: ['last'], message: 'last must be an integer from 1 to 100, got 101.' }]);
  });

  it("refuses what is not a cursor of the gateway's, however close", () => {
    const real = toCursor(12, LIST);
    for (const cursor of [
      '',
      'abc',
      `${real}=`,
      `${real}x`,
      real.slice(1),
      toCursor(10_000_001, LIST),
      Buffer.from(`12:${LIST}:`).toString('base64url'),
    ]) {
      expect(problems({ first: 5, after: cursor }), cursor).toEqual([
        {
          field: ['after'],
          message: `after must be a cursor this list answered, got ${JSON.stringify(cursor.length > 40 ? `${cursor.slice(0, 40)}…` : cursor)}.`,
        },
      ]);
    }
  });

  it('refuses a cursor made with other arguments, saying so', () => {
    expect(problems({ last: 5, before: toCursor(12, OTHER) })).toEqual([
      {
        field: ['before'],
        message:
          'before is a cursor of this list with other search or sort arguments, or of another list: a cursor only holds with the arguments it was made with. Start again without it.',
      },
    ]);
  });

  it('makes cursors that say nothing plainly: no offset or argument in clear', () => {
    const cursor = toCursor(12, LIST);
    expect(cursor).toMatch(/^[\w-]+$/);
    expect(cursor).not.toContain('12');
    expect(toCursor(12, OTHER)).not.toBe(cursor);
  });
});

describe('connectionCost', () => {
  it('is two calls a page, three for last without before, times the page size for what is under the edges', () => {
    expect(connectionCost({ first: 25 })).toEqual({ field: 2, multiplier: 25 });
    expect(connectionCost({ first: 25, after: 'x', before: 'y' })).toEqual({ field: 2, multiplier: 25 });
    expect(connectionCost({ last: 7, before: 'y' })).toEqual({ field: 2, multiplier: 7 });
    expect(connectionCost({ last: 7 })).toEqual({ field: 3, multiplier: 7 });
    expect(connectionCost({})).toEqual({ field: 2, multiplier: 1 });
  });
});

/** An install's paginator over `length` items (item i is `i`): pages of the size asked, with meta. */
function paginator(length: number): { read: (request: PageRead) => Promise<Page<number>>; reads: PageRead[] } {
  const reads: PageRead[] = [];
  return {
    reads,
    read: ({ perPage, page }) => {
      reads.push({ perPage, page });
      const start = (page - 1) * perPage;
      const nodes = Array.from({ length: Math.max(0, Math.min(perPage, length - start)) }, (_, i) => start + i);
      const lastPage = Math.max(1, Math.ceil(length / perPage));
      return Promise.resolve({ nodes, totalCount: length, page, perPage, lastPage, hasNextPage: page < lastPage });
    },
  };
}

/** Distinct pages read: the request's loader reads a page asked twice once. */
const distinct = (reads: PageRead[]): number => new Set(reads.map((read) => `${read.perPage}:${read.page}`)).size;

describe('offsetConnection', () => {
  it.each([7, 12, 25, 100])(
    'pages through 0, 1, 137 and 250 items with first %i: each once, in order, at most 2 pages each',
    async (size) => {
      for (const length of [0, 1, 137, 250]) {
        const { read, reads } = paginator(length);
        const seen: number[] = [];
        let after: string | null = null;
        for (let pages = 0; ; pages++) {
          expect(pages).toBeLessThanOrEqual(Math.ceil(length / size));
          reads.length = 0;
          const connection: OffsetConnection<number> = await offsetConnection<number>({ first: size, after }, LIST, read);
          expect(distinct(reads)).toBeLessThanOrEqual(2);
          expect(connection.totalCount).toBe(length);
          expect(connection.pageInfo.hasPreviousPage).toBe(seen.length > 0);
          seen.push(...connection.edges.map((edge) => edge.node));
          expect(connection.pageInfo.endCursor).toBe(connection.edges.at(-1)?.cursor ?? null);
          if (!connection.pageInfo.hasNextPage) break;
          after = connection.pageInfo.endCursor;
        }
        expect(seen).toEqual(Array.from({ length }, (_, i) => i));
      }
    },
  );

  it.each([7, 12, 25, 100])(
    'pages backwards through 137 items with last %i: each once, at most 3 pages for the first, 2 after',
    async (size) => {
      const { read, reads } = paginator(137);
      const seen: number[] = [];
      let before: string | null = null;
      for (;;) {
        reads.length = 0;
        const connection: OffsetConnection<number> = await offsetConnection<number>({ last: size, before }, LIST, read);
        expect(distinct(reads)).toBeLessThanOrEqual(before === null ? 3 : 2);
        seen.unshift(...connection.edges.map((edge) => edge.node));
        expect(connection.pageInfo.hasNextPage).toBe(before !== null);
        if (!connection.pageInfo.hasPreviousPage) break;
        before = connection.pageInfo.startCursor;
      }
      expect(seen).toEqual(Array.from({ length: 137 }, (_, i) => i));
    },
  );

  it('counts hasNextPage up to before, and hasPreviousPage down to after, as the cursor connections spec does', async () => {
    const { read } = paginator(50);
    const forward = await offsetConnection<number>({ first: 5, after: toCursor(9, LIST), before: toCursor(13, LIST) }, LIST, read);
    expect(forward.edges.map((edge) => edge.node)).toEqual([10, 11, 12]);
    expect(forward.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const backward = await offsetConnection<number>({ last: 5, after: toCursor(9, LIST), before: toCursor(13, LIST) }, LIST, read);
    expect(backward.edges.map((edge) => edge.node)).toEqual([10, 11, 12]);
    expect(backward.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const past = await offsetConnection<number>({ first: 5, after: toCursor(60, LIST) }, LIST, read);
    expect(past).toEqual({
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null },
      totalCount: 50,
    });
  });

  it('refuses pages of another size than asked (an install that ignores per_page): its offsets would make every cursor lie', async () => {
    const install = paginator(40);
    const fifteen = (request: PageRead) => install.read({ perPage: 15, page: request.page });
    await expect(offsetConnection<number>({ first: 12 }, LIST, fifteen)).rejects.toMatchObject({
      extensions: { code: 'UPSTREAM_BAD_RESPONSE' },
      message: 'The analytics service answered page 1 of 15 items where page 1 of 25 was asked.',
    });
  });
});
