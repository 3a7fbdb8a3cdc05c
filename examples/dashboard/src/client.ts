// One urql client per API key. Queries, and the live subscription, go out as trusted documents: the
// request names the document by its SHA-256 (the hash client-preset put in the manifest the gateway
// loaded) and carries no GraphQL text. Subscriptions go over the same fetch, as Server-Sent Events.
import { persistedExchange } from '@urql/exchange-persisted';
import { Client, cacheExchange, fetchExchange } from 'urql';

/** The hash client-preset embeds in each generated document, as "sha256:<hex>". */
interface HashedDocument {
  __meta__?: { hash?: string };
}

export function createClient(graphqlUrl: string, apiKey: string): Client {
  return new Client({
    url: graphqlUrl,
    exchanges: [
      cacheExchange,
      persistedExchange({
        enforcePersistedQueries: true,
        enableForMutation: true,
        enableForSubscriptions: true,
        // POST: a hash-only GET would be cached by the browser beside the key's other answers.
        preferGetForPersistedQueries: false,
        generateHash: async (_query, document) => {
          const hash = (document as HashedDocument).__meta__?.hash;
          if (hash === undefined) throw new Error('a document without a hash: run `npm run codegen`');
          return hash.replace(/^sha256:/, '');
        },
      }),
      fetchExchange,
    ],
    fetchSubscriptions: true,
    preferGetMethod: false,
    fetchOptions: { headers: { authorization: `Bearer ${apiKey}` } },
  });
}
