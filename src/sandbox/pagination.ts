// Laravel's LengthAwarePaginator as an API resource collection renders it.

export interface PaginatedBody<T> {
  data: T[];
  links: { first: string; last: string; prev: string | null; next: string | null };
  meta: {
    current_page: number;
    from: number | null;
    last_page: number;
    path: string;
    per_page: number;
    to: number | null;
    total: number;
  };
  status: 200;
}

/** One page of `items`; a page past the end is empty but its `meta` still describes the list. */
export function paginate<T>(items: readonly T[], page: number, perPage: number, path: string): PaginatedBody<T> {
  const total = items.length;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const offset = (page - 1) * perPage;
  const data = items.slice(offset, offset + perPage);
  const url = (n: number): string => `${path}?page=${n}`;
  return {
    data,
    links: {
      first: url(1),
      last: url(lastPage),
      prev: page > 1 ? url(page - 1) : null,
      next: page < lastPage ? url(page + 1) : null,
    },
    meta: {
      current_page: page,
      from: data.length > 0 ? offset + 1 : null,
      last_page: lastPage,
      path,
      per_page: perPage,
      to: data.length > 0 ? offset + data.length : null,
      total,
    },
    status: 200,
  };
}

// Laravel's LengthAwarePaginator rendered as is (its toArray()), as the older install answers
// stats: every URL at the top level, and `links` as the list of buttons a page would show.

export interface PaginatorLink {
  url: string | null;
  label: string;
  active: boolean;
}

export interface PlainPaginatedBody<T> {
  current_page: number;
  data: T[];
  first_page_url: string;
  from: number | null;
  last_page: number;
  last_page_url: string;
  links: PaginatorLink[];
  next_page_url: string | null;
  path: string;
  /** The per_page the controller was given, i.e. the request's string: Laravel 8 does not cast it. */
  per_page: string;
  prev_page_url: string | null;
  to: number | null;
  total: number;
  status: 200;
}

/** Laravel's default `onEachSide`. */
const ON_EACH_SIDE = 3;

/**
 * The page numbers Laravel's UrlWindow shows, `null` standing for a `...` gap: every page when
 * there are few, else the first two, a window around the current page and the last two.
 */
export function pageWindow(current: number, lastPage: number): (number | null)[] {
  const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
  if (lastPage < ON_EACH_SIDE * 2 + 8) return range(1, lastPage);
  const window = ON_EACH_SIDE + 4;
  if (current <= window) return [...range(1, window + ON_EACH_SIDE), null, ...range(lastPage - 1, lastPage)];
  if (current > lastPage - window) return [...range(1, 2), null, ...range(lastPage - (window + ON_EACH_SIDE - 1), lastPage)];
  return [...range(1, 2), null, ...range(current - ON_EACH_SIDE, current + ON_EACH_SIDE), null, ...range(lastPage - 1, lastPage)];
}

/** The plain paginator's `links`: previous, the page window (with `...` gaps), next. */
export function paginatorButtons(page: number, lastPage: number, url: (page: number) => string): PaginatorLink[] {
  return [
    { url: page > 1 ? url(page - 1) : null, label: '&laquo; Previous', active: false },
    ...pageWindow(page, lastPage).map((n) =>
      n === null ? { url: null, label: '...', active: false } : { url: url(n), label: String(n), active: n === page },
    ),
    { url: page < lastPage ? url(page + 1) : null, label: 'Next &raquo;', active: false },
  ];
}

/** One page of `items` as Laravel 8's paginator renders itself; `perPage` is echoed as a string. */
export function plainPaginate<T>(items: readonly T[], page: number, perPage: number, path: string): PlainPaginatedBody<T> {
  const total = items.length;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const offset = (page - 1) * perPage;
  const data = items.slice(offset, offset + perPage);
  const url = (n: number): string => `${path}?page=${n}`;
  const prev = page > 1 ? url(page - 1) : null;
  const next = page < lastPage ? url(page + 1) : null;
  return {
    current_page: page,
    data,
    first_page_url: url(1),
    from: data.length > 0 ? offset + 1 : null,
    last_page: lastPage,
    last_page_url: url(lastPage),
    links: paginatorButtons(page, lastPage, url),
    next_page_url: next,
    path,
    per_page: String(perPage),
    prev_page_url: prev,
    to: data.length > 0 ? offset + data.length : null,
    total,
    status: 200,
  };
}
