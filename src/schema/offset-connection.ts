// Relay's cursor arguments over a list the upstream serves by page number and size: which items they ask
// for, and the fewest upstream pages that hold them. A cursor is an item's offset, tied to the arguments
// that order and filter the list: with others, the same offset would be another item.
import { createHash } from 'node:crypto';
import { PER_PAGE_VALUES, type Page } from '../domain.js';
import { GatewayError } from '../errors.js';
import { shown, type Problem } from './validate.js';

/** The most items a page of a connection holds, and one upstream page. */
export const MAX_CONNECTION_PAGE = 100;

/** No list is this long: a cursor past it was not made by the gateway (and the page numbers stay small). */
const MAX_OFFSET = 10_000_000;

export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export interface OffsetConnection<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount: number;
}

export interface PageRead {
  perPage: number;
  page: number;
}

/** Offsets [start, end). */
export interface Window {
  start: number;
  end: number;
}

/** What a list's cursors are tied to (its name and normalized arguments), as a short hash a cursor carries. */
export function listFingerprint(identity: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(identity)).digest('base64url').slice(0, 12);
}

export const toCursor = (offset: number, fingerprint: string): string => Buffer.from(`${offset}:${fingerprint}`).toString('base64url');

type CursorReading = { offset: number } | { problem: 'malformed' | 'other list' };

function readCursor(cursor: string, fingerprint: string): CursorReading {
  const match = /^(\d{1,8}):([\w-]{12})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  const offset = Number(match?.[1]);
  // Spelled exactly as the gateway spells it: base64url decoding skips what it cannot read.
  if (!match || offset > MAX_OFFSET || toCursor(offset, match[2] ?? '') !== cursor) return { problem: 'malformed' };
  return match[2] === fingerprint ? { offset } : { problem: 'other list' };
}

function offsetOf(cursor: string, fingerprint: string): number {
  const reading = readCursor(cursor, fingerprint);
  if ('problem' in reading) throw new Error(`unchecked cursor ${cursor}`);
  return reading.offset;
}

function sizeProblem(name: 'first' | 'last', size: number): Problem | null {
  return Number.isInteger(size) && size >= 1 && size <= MAX_CONNECTION_PAGE
    ? null
    : { field: [name], message: `${name} must be an integer from 1 to ${MAX_CONNECTION_PAGE}, got ${size}.` };
}

/** `listArguments` names the arguments a cursor is tied to, for the message. */
export function connectionArgsProblems(args: ConnectionArgs, fingerprint: string, listArguments: string): Problem[] {
  const { first, last } = args;
  const problems: Problem[] = [];
  if (first == null && last == null) {
    problems.push({ field: ['first'], message: `Give first or last (1 to ${MAX_CONNECTION_PAGE}): how many items the page holds.` });
  } else if (first != null && last != null) {
    problems.push({ field: ['last'], message: `Give first or last, not both: got first ${first} and last ${last}.` });
  }
  for (const [name, size] of [
    ['first', first],
    ['last', last],
  ] as const) {
    const problem = size == null ? null : sizeProblem(name, size);
    if (problem) problems.push(problem);
  }
  for (const name of ['after', 'before'] as const) {
    const cursor = args[name];
    if (cursor == null) continue;
    const reading = readCursor(cursor, fingerprint);
    if (!('problem' in reading)) continue;
    const message =
      reading.problem === 'malformed'
        ? `${name} must be a cursor this list answered, got ${shown(cursor)}.`
        : `${name} is a cursor of this list with other ${listArguments}, or of another list: a cursor only holds with the arguments it was made with. Start again without it.`;
    problems.push({ field: [name], message });
  }
  return problems;
}

/** The most upstream calls a page can take: two, and one more first for `last` without `before`. */
export function connectionCost(args: ConnectionArgs): { field: number; multiplier: number } {
  const size = args.first ?? args.last;
  return {
    field: args.last != null && args.before == null ? 3 : 2,
    // Fields under the edges run once per item; the checks refuse a size out of range before this counts.
    multiplier: typeof size === 'number' && size >= 1 ? Math.min(size, MAX_CONNECTION_PAGE) : 1,
  };
}

/** The fewest calls (a page `read` already costs none), then the smallest pages; an empty window reads one. */
export function pagesCovering({ start, end }: Window, read?: PageRead): PageRead[] {
  const lastOffset = Math.max(end, start + 1) - 1;
  const calls = (reads: PageRead[]): number => reads.filter((r) => r.perPage !== read?.perPage || r.page !== read.page).length;
  let best: PageRead[] = [];
  for (const perPage of PER_PAGE_VALUES) {
    const first = Math.floor(start / perPage) + 1;
    const last = Math.floor(lastOffset / perPage) + 1;
    if (last - first > 1) continue;
    const reads =
      first === last
        ? [{ perPage, page: first }]
        : [
            { perPage, page: first },
            { perPage, page: last },
          ];
    if (best.length === 0 || calls(reads) < calls(best)) best = reads;
  }
  return best;
}

/** `upper`: the offset of `before`, or the list's length (needed for `last` only). */
export function windowOf(size: Pick<ConnectionArgs, 'first' | 'last'>, lower: number, upper: number | undefined): Window {
  if (size.first != null) {
    const end = upper === undefined ? lower + size.first : Math.min(lower + size.first, upper);
    return { start: lower, end: Math.max(lower, end) };
  }
  if (upper === undefined || size.last == null) throw new Error('last needs before or the length of the list');
  return { start: Math.min(Math.max(lower, upper - size.last), upper), end: upper };
}

/** Its arguments checked by connectionArgsProblems; `read` goes through the request's loaders. */
export async function offsetConnection<T>(
  args: ConnectionArgs,
  fingerprint: string,
  read: (page: PageRead) => Promise<Page<T>>,
): Promise<OffsetConnection<T>> {
  const lower = args.after == null ? 0 : offsetOf(args.after, fingerprint) + 1;
  let upper = args.before == null ? undefined : offsetOf(args.before, fingerprint);
  let probe: PageRead | undefined;
  if (args.last != null && upper === undefined) {
    // Where the list ends: its first page of 100 says, and holds all of a list of up to 100.
    probe = { perPage: MAX_CONNECTION_PAGE, page: 1 };
    upper = (await read(probe)).totalCount;
  }
  const window = windowOf(args, lower, upper);
  const reads = pagesCovering(window, probe);
  const pages = await Promise.all(reads.map(read));
  pages.forEach((page, index) => {
    const asked = reads[index];
    // Offsets are counted from the pages asked for: pages of another size would make every cursor lie.
    if (asked && (page.page !== asked.page || page.perPage !== asked.perPage)) {
      throw new GatewayError(
        'UPSTREAM_BAD_RESPONSE',
        `The analytics service answered page ${page.page} of ${page.perPage} items where page ${asked.page} of ${asked.perPage} was asked.`,
      );
    }
  });

  const base = ((reads[0]?.page ?? 1) - 1) * (reads[0]?.perPage ?? 0);
  const rows = pages.flatMap((page) => page.nodes);
  const edges = rows
    .slice(window.start - base, window.end - base)
    .map((node, index) => ({ cursor: toCursor(window.start + index, fingerprint), node }));
  const reached = window.start + edges.length;
  const finalPage = pages[pages.length - 1];
  const more = base + rows.length > reached || finalPage?.hasNextPage === true;
  return {
    edges,
    // As the cursor connections spec counts them: paging forward, the items up to `before`; paging
    // backward, the items from `after`. The other side says whether the list goes on at all.
    pageInfo: {
      hasNextPage: args.first != null ? more && (upper === undefined || reached < upper) : more,
      hasPreviousPage: args.last != null ? window.start > lower : window.start > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
    totalCount: finalPage?.totalCount ?? 0,
  };
}
