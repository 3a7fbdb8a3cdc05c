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
