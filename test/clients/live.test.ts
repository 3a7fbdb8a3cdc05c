// Live dashboards from the clients frontends use, over real HTTP against the gateway and the sandbox:
// the `graphql-sse` client itself, Apollo Client 4 with a graphql-sse link beside HttpLink, and urql 6
// with subscriptionExchange over graphql-sse. Each gets the first result of `subscription { website }`
// at once, and a query through the same client still goes over plain HTTP.
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { getMainDefinition } from '@apollo/client/utilities';
import { Client as UrqlClient, fetchExchange, subscriptionExchange } from '@urql/core';
import { Kind, OperationTypeNode, print } from 'graphql';
import { createClient, type Client as SseClient } from 'graphql-sse';
import { Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_1, useStack } from '../fixture.js';

const stack = useStack({ env: { LIVE_INTERVAL_S: '60' } });

const LIVE = `subscription Live($id: ID!) { website(id: $id) { id domain today: stats(name: VISITOR, period: TODAY) { totalCount } } }`;

interface LiveData {
  website: { id: string; domain: string; today: { totalCount: number } } | null;
}

const clients: SseClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.dispose();
});

function sseClient(): SseClient {
  const client = createClient({ url: stack.endpoint, headers: { authorization: `Bearer ${KEY_1}` }, retryAttempts: 0 });
  clients.push(client);
  return client;
}

describe('graphql-sse', () => {
  it('iterates the subscription: the first result at once', async () => {
    const live = sseClient().iterate<LiveData>({ query: LIVE, variables: { id: '1' } });
    const first = await live.next();
    expect(first.value?.data?.website).toMatchObject({ id: '1', domain: 'acme-analytics.com' });
    await live.return?.();
  });

  it("hears NOT_FOUND for another user's website, and the stream ends", async () => {
    const results: unknown[] = [];
    for await (const result of sseClient().iterate({ query: LIVE, variables: { id: '3' } })) results.push(result);
    expect(results).toEqual([{ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'NOT_FOUND' }) })] }]);
  });
});

describe('Apollo Client 4', () => {
  it('subscribes through a graphql-sse link beside HttpLink, and queries through HttpLink', async () => {
    const sse = sseClient();
    const sseLink = new ApolloLink(
      (operation) =>
        new Observable((observer) =>
          sse.subscribe(
            { query: print(operation.query), variables: operation.variables },
            {
              next: (value) => observer.next(value as never),
              error: (error) => observer.error(error),
              complete: () => observer.complete(),
            },
          ),
        ),
    );
    const isSubscription = ({ query }: ApolloLink.Operation): boolean => {
      const definition = getMainDefinition(query);
      return definition.kind === Kind.OPERATION_DEFINITION && definition.operation === OperationTypeNode.SUBSCRIPTION;
    };
    const client = new ApolloClient({
      cache: new InMemoryCache(),
      link: ApolloLink.split(isSubscription, sseLink, new HttpLink({ uri: stack.endpoint, headers: { authorization: `Bearer ${KEY_1}` } })),
    });
    const first = await new Promise<LiveData | undefined>((resolve, reject) => {
      const subscription = client.subscribe<LiveData>({ query: gql(LIVE), variables: { id: '2' } }).subscribe({
        next: (result) => {
          subscription.unsubscribe();
          resolve(result.data as LiveData | undefined);
        },
        error: reject,
      });
    });
    expect(first?.website?.id).toBe('2');
    const queried = await client.query<{ website: { id: string } }>({ query: gql('query One { website(id: "2") { id } }') });
    expect(queried.data?.website.id).toBe('2');
    client.stop();
  });
});

describe('urql 6', () => {
  it('subscribes with subscriptionExchange over graphql-sse', async () => {
    const sse = sseClient();
    const client = new UrqlClient({
      url: stack.endpoint,
      fetchOptions: { headers: { authorization: `Bearer ${KEY_1}` } },
      exchanges: [
        subscriptionExchange({
          forwardSubscription: (request) => ({
            subscribe: (sink) => ({ unsubscribe: sse.subscribe({ ...request, query: request.query ?? '' }, sink) }),
          }),
        }),
        fetchExchange,
      ],
    });
    const first = await new Promise<LiveData | undefined>((resolve) => {
      const { unsubscribe } = client.subscription<LiveData>(LIVE, { id: '4' }).subscribe((result) => {
        resolve(result.data);
        queueMicrotask(() => unsubscribe());
      });
    });
    expect(first?.website?.id).toBe('4');
  });
});
