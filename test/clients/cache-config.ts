// Client cache configurations for this schema, proven by the client suites and copied into docs/clients.md.
// Types without an identity of their own (StatList, Stat, WebsiteList, PageInfo have no id) are
// stored inside the object that holds them, so two queries that select the same list differently
// would replace each other's fields; each entry below says which replacement it prevents.
import type { FieldMergeFunction, InMemoryCacheConfig, StoreObject } from '@apollo/client';
import type { Cache, CacheExchangeOpts } from '@urql/exchange-graphcache';

// ---------------------------------------------------------------------------------------------
// Apollo Client 4: the options of `new InMemoryCache(apolloCacheConfig)` (test/clients/apollo.test.ts)
// ---------------------------------------------------------------------------------------------

/**
 * The rows (Stat) of one StatList, merged row by row, a row being identified by its `value` within
 * its list: two queries asking the same statistic for `nodes { value count }` and `nodes { value }`
 * keep both fields. (A `Stat` type policy cannot do this: Apollo applies type merge functions to
 * fields, not to the items of a list.) Rows that did not select `value` are replaced as they come.
 */
const mergeStatRows: FieldMergeFunction<StoreObject[], StoreObject[]> = (existing, incoming, { readField, mergeObjects }) => {
  if (existing === undefined) return incoming;
  const byValue = new Map<unknown, StoreObject>();
  for (const row of existing) {
    const value = readField('value', row);
    if (value !== undefined) byValue.set(value, row);
  }
  return incoming.map((row) => {
    const value = readField('value', row);
    const before = value === undefined ? undefined : byValue.get(value);
    return before === undefined ? row : mergeObjects(before, row);
  });
};

export const apolloCacheConfig: InMemoryCacheConfig = {
  typePolicies: {
    // Website.stats(...) (same arguments) selected differently by two queries, e.g. `nodes` in one and
    // `totalCount` in the other: merged, not replaced. Without it Apollo warns "Cache data may be lost
    // when replacing the stats field of a Website object" and refetches the first query. `nodes`:
    // the rows, merged as above; without it the first query is refetched (silently).
    StatList: { merge: true, fields: { nodes: { merge: mergeStatRows } } },
    // Query.websites(...) likewise, e.g. a list on screen and a mutation payload's
    // `query { websites(...) { totalCount } }`. Without it: "Cache data may be lost when replacing the
    // websites field of a Query object", and the list is refetched.
    WebsiteList: { merge: true },
    // A list's pageInfo selected differently (`hasNextPage` here, `page lastPage` there): merged.
    // Without it the first query is refetched (silently: the pageInfo sits inside a merged list).
    PageInfo: { merge: true },
  },
};

// ---------------------------------------------------------------------------------------------
// urql Graphcache: `urqlGraphcacheConfig` is added below by the urql suite.
// ---------------------------------------------------------------------------------------------

/**
 * urql's graphcache: `cacheExchange(urqlGraphcacheConfig)` from '@urql/exchange-graphcache'
 * (test/clients/urql.test.ts).
 *
 * `keys`: graphcache normalizes objects with an `id` (Website) and prints an "Invalid key" warning
 * for every other object a query result holds, unless `keys` names its type. These three have no
 * identity of their own (each is the answer to one field with its arguments, or a row of it), so
 * `() => null` embeds them in their parent field, as graphcache does anyway, minus the warnings.
 * PageInfo needs no entry: graphcache embeds *PageInfo, *Connection and *Edge types without asking.
 * Mutation payloads need none either: graphcache does not store the Mutation root's fields.
 *
 * `updates`: graphcache cannot know that a deleted website is gone; without this it keeps serving
 * `website(id:)` from the cache. (A write's payload `query { ... }` refreshes cached lists by itself.)
 */
export const urqlGraphcacheConfig = {
  keys: {
    // Website.stats(...) and Query.stats(...): one page of rows for these arguments.
    StatList: () => null,
    // A row of a StatList: a value and its count over that list's date range.
    Stat: () => null,
    // Query.websites(...): one page of the caller's websites.
    WebsiteList: () => null,
    // StatList.range: the days a list covers.
    DateRange: () => null,
  },
  updates: {
    Mutation: {
      deleteWebsite: (result: { deleteWebsite?: { deletedId?: string | null } }, _args: unknown, cache: Cache) => {
        // deletedId is null when userErrors says why nothing was deleted.
        const id = result.deleteWebsite?.deletedId;
        if (typeof id === 'string') cache.invalidate({ __typename: 'Website', id });
      },
    },
  },
} satisfies Partial<CacheExchangeOpts>;
