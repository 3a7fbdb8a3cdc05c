// Redis as managed services run it, started by a test on loopback ports from Debian's redis-server and
// redis-cli: a Redis Cluster of three masters with a replica each, and a primary with a replica that
// three sentinels watch. Short node and down-after timeouts, so that a failover takes seconds.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { onNode } from '../bench/processes.js';
import { type RedisServer, startRedis } from './redis.js';
import { until } from './fixture.js';
import { freePort } from './ports.js';

const run = promisify(execFile);

/** A short-lived admin connection to one node (the benchmark's): a node the test killed fails at once. */
export { onNode };

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

/** A CA, and a certificate for 127.0.0.1 that it signed: what a Redis over TLS and its clients need. */
export interface TlsFiles {
  ca: string;
  cert: string;
  key: string;
}

/** Makes them in `dir` with openssl (2-day certificates). */
export async function makeCertificates(dir: string): Promise<TlsFiles> {
  const file = (name: string): string => join(dir, name);
  const openssl = (args: string[]) => run('openssl', args);
  await openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=agw-test-ca',
  ]);
  await openssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    file('redis.key'),
    '-out',
    file('redis.csr'),
    '-subj',
    '/CN=127.0.0.1',
  ]);
  writeFileSync(file('san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  await openssl([
    'x509',
    '-req',
    '-in',
    file('redis.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('redis.pem'),
    '-days',
    '2',
    '-extfile',
    file('san.cnf'),
  ]);
  return { ca: file('ca.pem'), cert: file('redis.pem'), key: file('redis.key') };
}

export interface TopologyOptions {
  /**
   * Every server also listens with TLS, on a port of its own (the URL names those), and the servers
   * talk to each other over TLS (the cluster bus, replication, the sentinels). Plain ports stay open for
   * the test's own admin connections.
   */
  tls?: TlsFiles;
  /** An ACL user with all rights that the URL names (the default user stays open for the admin connections). */
  user?: { name: string; password: string };
  /** Sentinel only: the sentinels' own password (`requirepass`, and between sentinels), which the URL's query gives. */
  sentinelPassword?: string;
}

/** The arguments for `options` of a server whose TLS port is `tlsPort`. */
function optionArgs(options: TopologyOptions, tlsPort: number): string[] {
  const { tls, user } = options;
  return [
    ...(tls ? ['--tls-port', String(tlsPort), '--tls-cert-file', tls.cert, '--tls-key-file', tls.key, '--tls-ca-cert-file', tls.ca] : []),
    ...(tls ? ['--tls-auth-clients', 'no', '--tls-replication', 'yes'] : []),
    ...(user ? ['--user', user.name, 'on', `>${user.password}`, '~*', '&*', '+@all'] : []),
  ];
}

/** `user:password@` for the URL, encoded, or nothing. */
const credentials = (options: TopologyOptions): string =>
  options.user ? `${encodeURIComponent(options.user.name)}:${encodeURIComponent(options.user.password)}@` : '';

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
export async function startCluster(options: TopologyOptions = {}): Promise<RedisCluster> {
  const { dir, servers: nodes, close } = topologyFolder('agw-cluster-');
  const tlsPorts: number[] = [];
  try {
    for (let i = 0; i < 6; i++) {
      const tlsPort = await freePort();
      tlsPorts.push(tlsPort);
      nodes.push(
        await startRedis({
          args: [
            ...optionArgs(options, tlsPort),
            ...(options.tls ? ['--tls-cluster', 'yes'] : []),
            // The bus on a free port of its own: by default the node's port + 10,000, which a port above
            // 55,535 (a third of the ephemeral range) cannot have, and another server may hold.
            '--cluster-port',
            String(await freePort()),
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
    const addresses = nodes.map((node, i) => `127.0.0.1:${options.tls ? tlsPorts[i] : node.port}`);
    const tlsArgs = options.tls ? ['--tls', '--cacert', options.tls.ca] : [];
    await run('redis-cli', [...tlsArgs, '--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes']).catch(
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
  const seeds = nodes.map((node, i) => `127.0.0.1:${options.tls ? tlsPorts[i] : node.port}`);
  const url = `${options.tls ? 'rediss' : 'redis'}-cluster://${credentials(options)}${seeds.join(',')}`;
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
export async function startSentinels(options: TopologyOptions = {}): Promise<RedisSentinels> {
  const { dir, servers, close } = topologyFolder('agw-sentinel-');
  try {
    // Over TLS, the primary is known by its TLS port: to its replica, the sentinels and the gateways.
    const [primaryTls, replicaTls] = [await freePort(), await freePort()];
    const primary = await startRedis({ args: [...ownFiles(dir, 'primary'), ...optionArgs(options, primaryTls)] });
    servers.push(primary);
    const primaryAddress = String(options.tls ? primaryTls : primary.port);
    const replica = await startRedis({
      args: [...ownFiles(dir, 'replica'), ...optionArgs(options, replicaTls), '--replicaof', '127.0.0.1', primaryAddress],
    });
    servers.push(replica);
    const sentinels: RedisServer[] = [];
    const sentinelTlsPorts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const file = join(dir, `sentinel-${i}.conf`);
      writeFileSync(
        file,
        [
          `sentinel monitor ${PRIMARY_NAME} 127.0.0.1 ${primaryAddress} 2`,
          `sentinel down-after-milliseconds ${PRIMARY_NAME} 1000`,
          `sentinel failover-timeout ${PRIMARY_NAME} 3000`,
          ...(options.sentinelPassword
            ? [`requirepass "${options.sentinelPassword}"`, `sentinel sentinel-pass "${options.sentinelPassword}"`]
            : []),
          '',
        ].join('\n'),
      );
      const sentinelTls = await freePort();
      const tlsArgs = options.tls ? optionArgs({ tls: options.tls }, sentinelTls) : [];
      const sentinel = await startRedis({ configFile: file, args: ['--sentinel', ...tlsArgs], password: options.sentinelPassword });
      sentinels.push(sentinel);
      sentinelTlsPorts.push(sentinelTls);
      servers.push(sentinel);
    }
    // The test's own questions to a sentinel, with its password when it has one.
    const askSentinel = (sentinel: RedisServer | undefined, ...args: string[]) =>
      run('redis-cli', [
        '-p',
        String(sentinel?.port),
        ...(options.sentinelPassword ? ['--no-auth-warning', '-a', options.sentinelPassword] : []),
        'sentinel',
        ...args,
      ]);
    const primaryPort = async (): Promise<number> => {
      const { stdout } = await askSentinel(sentinels[0], 'get-master-addr-by-name', PRIMARY_NAME);
      return Number(stdout.trim().split('\n')[1]);
    };
    // Each sentinel knows the replica and the two others before a test relies on a failover.
    await until(
      'three sentinels that know the replica and each other',
      async () => {
        for (const sentinel of sentinels) {
          const { stdout } = await askSentinel(sentinel, 'master', PRIMARY_NAME);
          const fields = stdout.trim().split('\n');
          const value = (name: string): number => Number(fields[fields.indexOf(name) + 1]);
          if (value('num-slaves') < 1 || value('num-other-sentinels') < 2) return false;
        }
        return true;
      },
      30_000,
    );
    const addresses = sentinels.map((sentinel, i) => `127.0.0.1:${options.tls ? sentinelTlsPorts[i] : sentinel.port}`);
    const query = options.sentinelPassword ? `?sentinelPassword=${encodeURIComponent(options.sentinelPassword)}` : '';
    const url = `${options.tls ? 'rediss' : 'redis'}-sentinel://${credentials(options)}${addresses.join(',')}/${PRIMARY_NAME}${query}`;
    return { url, primary, replica, sentinels, primaryPort, close };
  } catch (error) {
    await close();
    throw error;
  }
}
