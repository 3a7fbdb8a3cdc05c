// Redis as managed services run it, started by a test on loopback ports from Debian's redis-server and
// redis-cli: a Redis Cluster of three masters with a replica each, and a primary with a replica that
// three sentinels watch. Short node and down-after timeouts, so that a failover takes seconds.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { type RedisServer, startRedis } from './redis.js';
import { until } from './fixture.js';

const run = promisify(execFile);

/**
 * A short-lived admin connection to one node, made and closed around `use`: it does not retry (a node the
 * test killed fails at once).
 */
export async function onNode<T>(port: number, use: (admin: Redis) => Promise<T>): Promise<T> {
  const admin = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await admin.connect();
    return await use(admin);
  } finally {
    admin.disconnect();
  }
}

/** A topology's own folder and the servers started in it, all killed and the folder removed by `close`. */
function topologyFolder(prefix: string): { dir: string; servers: RedisServer[]; close(): Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const servers: RedisServer[] = [];
  return {
    dir,
    servers,
    async close() {
      await Promise.all(servers.map((server) => server.kill()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A server's files in the topology's own folder: a replica's full sync writes an RDB file even with
 * `--save ''`, and one left in the shared temporary folder would be loaded by the next Redis started
 * there (another test's: entries of another run). Diskless sync writes none on the primary.
 */
function ownFiles(dir: string, name: string): string[] {
  return ['--dir', dir, '--dbfilename', `${name}.rdb`, '--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0'];
}

export interface RedisCluster {
  /** redis-cluster://127.0.0.1:<port>,… (every node a seed) */
  url: string;
  nodes: RedisServer[];
  /** The master that holds `key`'s hash slot now (asked of the cluster). */
  masterOf(key: string): Promise<RedisServer>;
  close(): Promise<void>;
}

/** Every node's view of the cluster is "ok" and has three masters, each with a replica. */
async function clusterReady(ports: readonly number[]): Promise<boolean> {
  for (const port of ports) {
    const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info']).catch(() => ({ stdout: '' }));
    if (!stdout.includes('cluster_state:ok')) return false;
  }
  return true;
}

/** Six redis-servers in cluster mode, joined by `redis-cli --cluster create … --cluster-replicas 1`. */
export async function startCluster(): Promise<RedisCluster> {
  const { dir, servers: nodes, close } = topologyFolder('agw-cluster-');
  try {
    for (let i = 0; i < 6; i++) {
      nodes.push(
        await startRedis({
          args: [
            ...ownFiles(dir, `node-${i}`),
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            `node-${i}.conf`,
            '--cluster-node-timeout',
            '1000',
            // A replica takes over however long since it last heard its master (the default wants it
            // recent, within ten node timeouts, and on a busy machine may leave the slots unowned).
            '--cluster-replica-validity-factor',
            '0',
          ],
        }),
      );
    }
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes']).catch(
      (error: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`redis-cli --cluster create failed: ${error.message}\n${error.stdout ?? ''}${error.stderr ?? ''}`);
      },
    );
    const ports = nodes.map((node) => node.port);
    await until('every node of the cluster in state ok', () => clusterReady(ports), 30_000);
  } catch (error) {
    await close();
    throw error;
  }
  const url = `redis-cluster://${nodes.map((node) => `127.0.0.1:${node.port}`).join(',')}`;
  return {
    url,
    nodes,
    async masterOf(key) {
      for (const node of nodes) {
        const owner = await onNode(node.port, async (admin) => {
          if (((await admin.call('ROLE')) as [string])[0] !== 'master') return undefined;
          const slot = (await admin.call('CLUSTER', 'KEYSLOT', key)) as number;
          const shards = (await admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
          return shards.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1];
        }).catch(() => undefined); // a node killed by the test: ask the next
        const found = nodes.find((candidate) => candidate.port === owner);
        if (found) return found;
      }
      throw new Error(`no master holds the slot of ${key}`);
    },
    close,
  };
}

export interface RedisSentinels {
  /** redis-sentinel://127.0.0.1:<port>,…/mymaster */
  url: string;
  primary: RedisServer;
  replica: RedisServer;
  sentinels: RedisServer[];
  /** The address the sentinels give for the primary now. */
  primaryPort(): Promise<number>;
  close(): Promise<void>;
}

export const PRIMARY_NAME = 'mymaster';

/** A primary, its replica, and three sentinels watching it (quorum 2, down after 1 s). */
export async function startSentinels(): Promise<RedisSentinels> {
  const { dir, servers, close } = topologyFolder('agw-sentinel-');
  try {
    const primary = await startRedis({ args: ownFiles(dir, 'primary') });
    servers.push(primary);
    const replica = await startRedis({ args: [...ownFiles(dir, 'replica'), '--replicaof', '127.0.0.1', String(primary.port)] });
    servers.push(replica);
    const sentinels: RedisServer[] = [];
    for (let i = 0; i < 3; i++) {
      const file = join(dir, `sentinel-${i}.conf`);
      writeFileSync(
        file,
        [
          `sentinel monitor ${PRIMARY_NAME} 127.0.0.1 ${primary.port} 2`,
          `sentinel down-after-milliseconds ${PRIMARY_NAME} 1000`,
          `sentinel failover-timeout ${PRIMARY_NAME} 3000`,
          '',
        ].join('\n'),
      );
      const sentinel = await startRedis({ configFile: file, args: ['--sentinel'] });
      sentinels.push(sentinel);
      servers.push(sentinel);
    }
    const primaryPort = async (): Promise<number> => {
      const { stdout } = await run('redis-cli', ['-p', String(sentinels[0]?.port), 'sentinel', 'get-master-addr-by-name', PRIMARY_NAME]);
      return Number(stdout.trim().split('\n')[1]);
    };
    // Each sentinel knows the replica and the two others before a test relies on a failover.
    await until(
      'three sentinels that know the replica and each other',
      async () => {
        for (const sentinel of sentinels) {
          const { stdout } = await run('redis-cli', ['-p', String(sentinel.port), 'sentinel', 'master', PRIMARY_NAME]);
          const fields = stdout.trim().split('\n');
          const value = (name: string): number => Number(fields[fields.indexOf(name) + 1]);
          if (value('num-slaves') < 1 || value('num-other-sentinels') < 2) return false;
        }
        return true;
      },
      30_000,
    );
    const url = `redis-sentinel://${sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(',')}/${PRIMARY_NAME}`;
    return { url, primary, replica, sentinels, primaryPort, close };
  } catch (error) {
    await close();
    throw error;
  }
}
