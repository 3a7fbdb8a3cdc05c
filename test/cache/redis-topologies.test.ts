// The shared state on Redis as managed services run it, against the real thing (test/redis-topologies.ts):
// a Redis Cluster of three masters and three replicas (REDIS_URL=redis-cluster://…) and a primary with a
// replica under three sentinels (redis-sentinel://…/mymaster). Two gateways and one sandbox on each: a
// read through one is a hit through the other, a write through one is seen at once through the other,
// an APQ document registered on one runs on the other, a live topic has one poller for both; a key's
// names share a slot while different keys spread over the masters; and the master that holds the key's
// slot killed under load costs no failed request and no wrong answer, and the cache is used again.
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { sha256Hex } from '../../src/graphql/plugins/use-persisted-queries.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { RedisCacheStore } from '../../src/cache/redis-store.js';
import { storeNames } from '../../src/cache/keys.js';
import {
  FIXED_DASHBOARD,
  type FixedDashboardData,
  KEY_1,
  KEY_2,
  UPDATE_WEBSITE,
  type GraphQLResponse,
  type WebsitePayloadData,
  dataOf,
  postGraphQL,
  restCalls,
  testConfig,
  until,
} from '../fixture.js';
import { openSubscription, type SseStream } from '../live/sse.js';
import { describeNeeding } from '../needs.js';
import type { RedisServer } from '../redis.js';
import { type RedisCluster, type RedisSentinels, onNode, startCluster, startSentinels } from '../redis-topologies.js';

// A cluster is joined by redis-cli, and each test file starts both kinds: skipped without them outside CI
// (test/needs.ts).
const describe = describeNeeding('redis-server', 'redis-cli');
interface Usage {
  upstreamCalls: number;
  cache: { hits: number; misses: number; stale: number };
}
const usageOf = (response: GraphQLResponse<unknown>): Usage => response.extensions as unknown as Usage;
const DASHBOARD_READS = 6;

interface Topology {
  url: string;
  /** Every key name of the gateway's in the store, from every master (or the primary). */
  keys(pattern: string): Promise<string[]>;
  /** Kills (SIGKILL) what holds `name` now: its master, or the primary; resolves once it has exited. */
  killHolderOf(name: string): Promise<void>;
  /** Whether the store is whole again after a kill (the cluster ok, a new primary known). */
  recovered(): Promise<boolean>;
  close(): Promise<void>;
}

async function clusterTopology(): Promise<Topology & { cluster: RedisCluster }> {
  const cluster = await startCluster();
  const alive = new Set(cluster.nodes);
  return {
    cluster,
    url: cluster.url,
    async keys(pattern) {
      const names: string[] = [];
      for (const node of alive) {
        const kept = await onNode(node.port, async (admin) =>
          ((await admin.call('ROLE')) as [string])[0] === 'master' ? admin.keys(pattern) : [],
        );
        names.push(...kept);
      }
      return names;
    },
    async killHolderOf(name) {
      const master = await cluster.masterOf(name);
      alive.delete(master);
      await master.kill();
    },
    async recovered() {
      const client = new Cluster(
        [...alive].map((node) => ({ host: '127.0.0.1', port: node.port })),
        { clusterRetryStrategy: () => null },
      );
      try {
        const info = String(await client.cluster('INFO'));
        return info.includes('cluster_state:ok');
      } catch {
        return false;
      } finally {
        client.disconnect();
      }
    },
    close: () => cluster.close(),
  };
}

async function sentinelTopology(): Promise<Topology & { sentinels: RedisSentinels }> {
  const sentinels = await startSentinels();
  const servers = [sentinels.primary, sentinels.replica];
  let killed: number | null = null;
  return {
    sentinels,
    url: sentinels.url,
    async keys(pattern) {
      return onNode(await sentinels.primaryPort(), (admin) => admin.keys(pattern));
    },
    async killHolderOf() {
      killed = await sentinels.primaryPort();
      await servers.find((server) => server.port === killed)?.kill();
    },
    async recovered() {
      return killed === null || (await sentinels.primaryPort()) !== killed;
    },
    close: () => sentinels.close(),
  };
}

interface Client {
  gateway: Gateway;
  gql<T>(query: string, variables?: Record<string, unknown>, key?: string): Promise<GraphQLResponse<T>>;
}

describe.each([
  ['a Redis Cluster (3 masters, 3 replicas)', clusterTopology],
  ['a primary and a replica under three sentinels', sentinelTopology],
] as const)('two gateways on %s', (_name, start) => {
  let topology: Topology;
  let sandbox: Sandbox;
  let a: Client;
  let b: Client;
  const gateways: Gateway[] = [];
  const streams: SseStream<unknown>[] = [];

  const startGateway = async (env: Record<string, string> = {}): Promise<Client> => {
    // A budget of 2 s, not 100 ms: these tests are about what is shared, on a machine that may be busy.
    const gateway = await createGateway(
      testConfig(sandbox.url, { CACHE: 'on', REDIS_URL: topology.url, CACHE_STORE_TIMEOUT_MS: '2000', LIVE_INTERVAL_S: '1', ...env }),
    );
    gateways.push(gateway);
    return {
      gateway,
      gql: <T>(query: string, variables?: Record<string, unknown>, key = KEY_1) =>
        postGraphQL<T>(`${gateway.url}/graphql`, { query, variables }, { authorization: `Bearer ${key}` }),
    };
  };

  beforeAll(async () => {
    topology = await start();
    // Today is the real one, as the gateways' clock; its figures stay at the full day's (liveToday: false).
    sandbox = await startSandbox({ port: 0, liveToday: false });
    [a, b] = [await startGateway(), await startGateway()];
  }, 60_000);
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await Promise.all(gateways.map((gateway) => gateway.close()));
    await sandbox?.close();
    await topology?.close();
  });

  /** Until the background writes of the answers just read are in the store (an answer does not wait for them). */
  const cached = (pattern: string, count: number): Promise<void> =>
    until(`${count} entries ${pattern} in the store`, async () => (await topology.keys(pattern)).length >= count);

  it('a read through one is a hit through the other; a key keeps its names in one slot, another key elsewhere', async () => {
    sandbox.log.reset();
    const first = await a.gql<FixedDashboardData>(FIXED_DASHBOARD);
    const data = dataOf(first);
    expect(restCalls(sandbox)).toHaveLength(DASHBOARD_READS);
    await cached('agw:c:*', DASHBOARD_READS);

    sandbox.log.reset();
    const second = await b.gql<FixedDashboardData>(FIXED_DASHBOARD);
    expect(dataOf(second)).toEqual(data);
    expect(restCalls(sandbox)).toEqual([]);
    expect(usageOf(second)).toMatchObject({ upstreamCalls: 0, cache: { hits: DASHBOARD_READS, misses: 0 } });

    // Every name of KEY_1's (entries, counters, marks) carries one hash tag; KEY_2's another.
    await b.gql('{ websites { totalCount } }', {}, KEY_2);
    await until('both keys with entries', async () => new Set(tagsOf(await topology.keys('agw:c:*'))).size === 2);
    const names = await topology.keys('agw:*');
    const tagged = names.filter((name) => !name.startsWith('agw:{apq}:') && name !== 'agw:secret');
    expect(tagged.length).toBeGreaterThan(2 * DASHBOARD_READS);
    for (const name of tagged) expect(name).toMatch(/^agw:[a-z]+:\{[\w-]{32}\}/);
    expect(new Set(tagsOf(tagged)).size).toBe(2);
  });

  it('a write through one is seen at once through the other', async () => {
    const READ = '{ website(id: "2") { id emailReports } }';
    type ReadData = { website: { id: string; emailReports: boolean } };
    const before = dataOf(await a.gql<ReadData>(READ)).website.emailReports;
    await until('the website cached', async () => {
      sandbox.log.reset();
      await a.gql(READ);
      return restCalls(sandbox).length === 0;
    });
    const update = await b.gql<{ updateWebsite: WebsitePayloadData }>(UPDATE_WEBSITE, { id: '2', input: { emailReports: !before } });
    expect(dataOf(update).updateWebsite.userErrors).toEqual([]);
    expect(dataOf(await a.gql<ReadData>(READ)).website.emailReports).toBe(!before);
    expect(dataOf(await b.gql<ReadData>(READ)).website.emailReports).toBe(!before);
  });

  it('an APQ document registered on one runs on the other by its hash', async () => {
    const query = `query Shared${Date.now()} { website(id: "1") { id domain } }`;
    const persistedQuery = { version: 1, sha256Hash: sha256Hex(query) };
    const post = (client: Client, body: unknown) =>
      postGraphQL<{ website: { id: string } }>(`${client.gateway.url}/graphql`, body, { authorization: `Bearer ${KEY_1}` });
    expect(dataOf(await post(a, { query, extensions: { persistedQuery } })).website.id).toBe('1');
    await until('the document kept', async () => (await topology.keys(`agw:{apq}:${persistedQuery.sha256Hash}`)).length === 1);
    expect(dataOf(await post(b, { extensions: { persistedQuery } })).website.id).toBe('1');
  });

  it('a live topic watched on both has one poller: the second stream is answered from the store, a change reaches both', async () => {
    type Live = { website: { id: string; today: { nodes: { count: number }[] } } };
    const LIVE = 'subscription Live { website(id: "2") { id today: stats(name: VISITOR, period: TODAY) { nodes { count } } } }';
    const open = async (client: Client): Promise<SseStream<Live>> => {
      const stream = await openSubscription<Live>(`${client.gateway.url}/graphql`, { query: LIVE }, KEY_1);
      streams.push(stream as SseStream<unknown>);
      return stream;
    };
    const visitors = (event: Awaited<ReturnType<SseStream<Live>['next']>>): number => event?.data?.website.today.nodes[0]?.count ?? -1;
    const onA = await open(a);
    const first = visitors(await onA.next());
    expect(first).toBeGreaterThanOrEqual(0);
    await until('the result kept in the store', async () => (await topology.keys('agw:live:last:*')).length === 1);
    sandbox.log.reset();
    const onB = await open(b);
    expect(visitors(await onB.next())).toBe(first);
    expect(restCalls(sandbox).filter((call) => call.includes('/websites/2'))).toEqual([]); // from the store, not polled
    const locks = await topology.keys('agw:live:lock:*');
    expect(locks).toHaveLength(1);

    const added = await fetch(`${sandbox.url}/__sandbox/traffic`, { method: 'POST', body: JSON.stringify({ websiteId: 2, visitors: 4 }) });
    expect(added.status).toBe(204);
    for (const stream of [onA, onB]) {
      await until('the change on each stream', async () => visitors(await stream.next(5_000)) === first + 4, 15_000);
    }
  });

  it('the master holding the key killed under load: no failed or wrong answer, the cache used again', { timeout: 90_000 }, async () => {
    // Two gateways with the store's budget as deployed (CACHE_STORE_TIMEOUT_MS=100): a read the store
    // cannot answer within it goes to the install.
    const budget = { CACHE_STORE_TIMEOUT_MS: '100' };
    const [one, two] = [await startGateway(budget), await startGateway(budget)];
    const reference = dataOf(await one.gql<FixedDashboardData>(FIXED_DASHBOARD));
    await until('the dashboard from the store', async () => usageOf(await two.gql(FIXED_DASHBOARD)).upstreamCalls === 0);
    // KEY_1's names: the tag of its statistics' entries (KEY_2 read only its list of websites).
    const [stats] = tagsOf(await topology.keys('agw:c:*:s:*'));
    const seen = `agw:seen:{${stats}}`;
    expect(await topology.keys(seen)).toEqual([seen]);
    const counts = { requests: 0, failed: 0, wrong: 0, fromUpstream: 0 };
    /** When the holder had exited; when a request sent after that was first answered from the store. */
    let killedAt = 0;
    let usedAgainAt = 0;
    let stop = false;
    const load = async (client: Client): Promise<void> => {
      while (!stop) {
        const sentAfterKill = killedAt > 0;
        const response = await client.gql<FixedDashboardData>(FIXED_DASHBOARD).catch(() => null);
        counts.requests++;
        if (response === null || response.status !== 200 || response.errors?.length) counts.failed++;
        else if (JSON.stringify(response.data) !== JSON.stringify(reference)) counts.wrong++;
        else if (sentAfterKill && usageOf(response).upstreamCalls > 0) counts.fromUpstream++;
        else if (sentAfterKill && usageOf(response).cache.hits === DASHBOARD_READS && usedAgainAt === 0) usedAgainAt = performance.now();
      }
    };
    const loads = [load(one), load(two), load(one), load(two)];
    await until('requests under way', () => counts.requests > 20);
    await topology.killHolderOf(seen);
    killedAt = performance.now();
    await until('the store whole again', () => topology.recovered(), 30_000);
    await until('the cache used again', () => usedAgainAt > 0, 30_000);
    stop = true;
    await Promise.all(loads);
    console.log(
      `failover (${_name}): ${counts.requests} requests, ${counts.failed} failed, ${counts.wrong} wrong, ` +
        `${counts.fromUpstream} read from the install after the kill; the cache used again ` +
        `${Math.round(usedAgainAt - killedAt)} ms after it`,
    );
    expect(counts.failed).toBe(0);
    expect(counts.wrong).toBe(0);
  });
});

/** A cluster and a sandbox of a describe's own, and the gateways its tests start on them: closed after it. */
function clusterOfItsOwn(): { cluster: RedisCluster; sandbox: Sandbox; gateways: Gateway[] } {
  const own = { gateways: [] } as unknown as { cluster: RedisCluster; sandbox: Sandbox; gateways: Gateway[] };
  beforeAll(async () => {
    own.cluster = await startCluster();
    own.sandbox = await startSandbox({ port: 0, liveToday: false });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(own.gateways.map((gateway) => gateway.close()));
    await own.sandbox?.close();
    await own.cluster?.close();
  });
  return own;
}

describe('gateways on a Redis Cluster while a slot moves to another master', () => {
  const own = clusterOfItsOwn();

  it('follows MOVED and ASK under load: no failed or wrong answer, the entries read from their new master', {
    timeout: 90_000,
  }, async () => {
    const { cluster, sandbox, gateways } = own;
    const start = async (): Promise<(query: string) => Promise<GraphQLResponse<FixedDashboardData>>> => {
      const gateway = await createGateway(testConfig(sandbox.url, { CACHE: 'on', REDIS_URL: cluster.url, CACHE_STORE_TIMEOUT_MS: '2000' }));
      gateways.push(gateway);
      return (query) => postGraphQL<FixedDashboardData>(`${gateway.url}/graphql`, { query }, { authorization: `Bearer ${KEY_1}` });
    };
    const [one, two] = [await start(), await start()];
    const reference = dataOf(await one(FIXED_DASHBOARD));
    await until('the dashboard from the store', async () => usageOf(await two(FIXED_DASHBOARD)).upstreamCalls === 0);
    const masterKeys = async (port: number, pattern: string): Promise<string[]> => onNode(port, (admin) => admin.keys(pattern));
    // KEY_1's slot, the master that holds it and another to take it.
    // KEY_1's slot (its only key: one tag), the master that holds it and another to take it.
    const [tag] = new Set(tagsOf((await Promise.all(cluster.nodes.map((node) => masterKeys(node.port, 'agw:seen:*')))).flat()));
    const name = `agw:seen:{${tag}}`;
    const source = await cluster.masterOf(name);
    const slot = await onNode(source.port, async (admin) => (await admin.call('CLUSTER', 'KEYSLOT', name)) as number);
    const masters: RedisServer[] = [];
    for (const node of cluster.nodes) {
      const role = await onNode(node.port, async (admin) => ((await admin.call('ROLE')) as [string])[0]);
      if (role === 'master') masters.push(node);
    }
    const target = masters.find((node) => node !== source) as RedisServer;
    const idOf = (node: RedisServer): Promise<string> => onNode(node.port, async (admin) => String(await admin.call('CLUSTER', 'MYID')));
    const [sourceId, targetId] = [await idOf(source), await idOf(target)];

    const counts = { requests: 0, failed: 0, wrong: 0, whileMoving: 0, fromStoreWhileMoving: 0 };
    /** Set once an entry of the dashboard is on the target while the slot is still the source's: ASK. */
    let entryMoved = 0;
    let handedOver = false;
    let stop = false;
    const load = async (ask: (query: string) => Promise<GraphQLResponse<FixedDashboardData>>): Promise<void> => {
      while (!stop) {
        const sentWhileMoving = entryMoved > 0 && !handedOver;
        const response = await ask(FIXED_DASHBOARD).catch(() => null);
        counts.requests++;
        if (response === null || response.status !== 200 || response.errors?.length) counts.failed++;
        else if (JSON.stringify(response.data) !== JSON.stringify(reference)) counts.wrong++;
        else if (sentWhileMoving && !handedOver) {
          counts.whileMoving++;
          if (usageOf(response).upstreamCalls === 0) counts.fromStoreWhileMoving++;
        }
      }
    };
    const loads = [load(one), load(two), load(one), load(two)];
    await until('requests under way', () => counts.requests > 20);
    // The slot moved as redis-cli --cluster reshard moves it: importing, migrating, its names one at a
    // time (meanwhile a name already moved is asked of the target: ASK), then the slot given to the target
    // (the others answer MOVED).
    await onNode(target.port, (admin) => admin.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', sourceId));
    await onNode(source.port, (admin) => admin.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', targetId));
    const moved: string[] = [];
    for (;;) {
      const names = await onNode(source.port, async (admin) => (await admin.call('CLUSTER', 'GETKEYSINSLOT', slot, 1)) as string[]);
      if (names.length === 0) break;
      await onNode(source.port, (admin) => admin.call('MIGRATE', '127.0.0.1', target.port, '', 0, 5_000, 'KEYS', ...names));
      moved.push(...names);
      if (names.some((moving) => moving.startsWith('agw:c:'))) entryMoved++;
      const before = counts.whileMoving;
      if (entryMoved > 0) await until('requests while the slot is half moved', () => counts.whileMoving > before + 2);
    }
    handedOver = true;
    for (const node of masters) await onNode(node.port, (admin) => admin.call('CLUSTER', 'SETSLOT', slot, 'NODE', targetId));
    const afterMove = counts.requests;
    await until('requests after the move', () => counts.requests > afterMove + 20);
    stop = true;
    await Promise.all(loads);

    expect(moved).toContain(name);
    expect(await masterKeys(target.port, name)).toEqual([name]);
    expect(await masterKeys(source.port, name)).toEqual([]);
    console.log(`slot moved (${moved.length} names): ${JSON.stringify(counts)}`);
    expect(counts).toMatchObject({ failed: 0, wrong: 0 });
    // An entry asked of the source after it moved is answered ASK: followed, it is still a hit.
    expect(counts.fromStoreWhileMoving).toBeGreaterThan(0);
    // The entries are used from their new master, through both gateways.
    sandbox.log.reset();
    for (const ask of [one, two]) expect(usageOf(await ask(FIXED_DASHBOARD)).upstreamCalls).toBe(0);
    expect(restCalls(sandbox)).toEqual([]);
  });
});

describe('a write through one gateway at the moment the master holding the key dies', () => {
  const own = clusterOfItsOwn();

  it('a walk of the names (an overflow of owed drops) finds them on every master', async () => {
    const store = new RedisCacheStore(own.cluster.url, 2_000);
    try {
      const marked = Array.from({ length: 30 }, (_, i) => storeNames.hasEntries(`walk-${i}`));
      for (const name of marked) await store.mark(name, 60_000);
      const found: string[] = [];
      for await (const names of store.namesStartingWith(storeNames.everyHasEntries)) found.push(...names);
      expect(found.sort()).toEqual([...marked].sort());
      // Spread over the masters, not all in one slot.
      expect(new Set(await Promise.all(marked.map(async (name) => (await own.cluster.masterOf(`agw:${name}`)).port))).size).toBeGreaterThan(
        1,
      );
    } finally {
      await store.close();
    }
  });

  it('the other gateway never answers from before the write, through the failover and after it', { timeout: 90_000 }, async () => {
    const { cluster, sandbox, gateways } = own;
    const READ = '{ website(id: "2") { id emailReports } }';
    type ReadData = { website: { id: string; emailReports: boolean } };
    const start = async () => {
      // The store's budget as deployed: a read the store cannot answer within it goes to the install.
      const gateway = await createGateway(testConfig(sandbox.url, { CACHE: 'on', REDIS_URL: cluster.url, CACHE_STORE_TIMEOUT_MS: '100' }));
      gateways.push(gateway);
      return (query: string, variables?: Record<string, unknown>) =>
        postGraphQL<ReadData & { updateWebsite: WebsitePayloadData }>(
          `${gateway.url}/graphql`,
          { query, variables },
          { authorization: `Bearer ${KEY_1}` },
        );
    };
    const [writer, other] = [await start(), await start()];
    const before = dataOf(await writer(READ)).website.emailReports;
    await until('the website from the store through the other', async () => usageOf(await other(READ)).upstreamCalls === 0);
    const [tag] = tagsOf(await keysOnMasters(cluster, 'agw:seen:*'));
    const holder = await cluster.masterOf(`agw:seen:{${tag}}`);

    // The other gateway reads without a pause from before the kill until well after its store is back.
    const answers: { emailReports: boolean | null; fromStore: boolean; at: number; sentAt: number }[] = [];
    let stop = false;
    const reading = (async () => {
      while (!stop) {
        const sentAt = performance.now();
        const response = await other(READ).catch(() => null);
        const emailReports = response?.data?.website?.emailReports ?? null;
        answers.push({
          emailReports,
          fromStore: response !== null && usageOf(response).upstreamCalls === 0,
          at: performance.now(),
          sentAt,
        });
      }
    })();
    await until('reads under way', () => answers.length > 10);
    await holder.kill();
    const killedAt = performance.now();
    const update = await writer(UPDATE_WEBSITE, { id: '2', input: { emailReports: !before } });
    expect(dataOf(update).updateWebsite.userErrors).toEqual([]);
    const writtenAt = performance.now();
    // A read sent before the write's answer may have been answered before the write: only later ones count.
    const sentAfter = () => answers.filter((answer) => answer.sentAt >= writtenAt);
    // From the store again through the other gateway, then 3 s more.
    await until('the other gateway answering from the store again', () => sentAfter().some((answer) => answer.fromStore), 30_000);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    stop = true;
    await reading;
    const after = sentAfter();
    const stale = after.filter((answer) => answer.emailReports === before);
    const from = (at: number | undefined): number => Math.round((at ?? killedAt) - killedAt);
    console.log(
      `write at a master's death: ${after.length} reads through the other gateway after it, ${stale.length} from before it ` +
        `(${from(stale[0]?.at)} to ${from(stale.at(-1)?.at)} ms after the kill); from the store again ` +
        `${from(after.find((answer) => answer.fromStore)?.at)} ms after it`,
    );
    expect(stale).toEqual([]);
  });
});

/** Every name matching `pattern` on the masters of `cluster`. */
async function keysOnMasters(cluster: RedisCluster, pattern: string): Promise<string[]> {
  const names: string[] = [];
  for (const node of cluster.nodes) {
    const kept = await onNode(node.port, async (admin) =>
      ((await admin.call('ROLE')) as [string])[0] === 'master' ? admin.keys(pattern) : [],
    );
    names.push(...kept);
  }
  return names;
}

/** The hash tags of store names. */
function tagsOf(names: readonly string[]): string[] {
  return names.map((name) => /\{([^}]*)\}/.exec(name)?.[1] ?? '');
}
