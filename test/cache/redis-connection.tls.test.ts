// REDIS_URL's TLS forms with a user and a password, as a managed Redis is reached: rediss-cluster:// (a
// cluster of three masters and three replicas, every node over TLS, the cluster bus too) and
// rediss-sentinel:// (a primary and its replica over TLS, three sentinels asked over TLS). A gateway
// process (dist/main.js, as deployed) trusts the test's CA through NODE_EXTRA_CA_CERTS, as a private
// CA is trusted in production; without it, the same URL is refused and the gateway reads past the store.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { KEY_1, dataOf, postGraphQL } from '../fixture.js';
import { describeNeeding } from '../needs.js';
import { type TlsFiles, type TopologyOptions, makeCertificates, onNode, startCluster, startSentinels } from '../redis-topologies.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const USER = { name: 'gateway', password: 's3cret:/@' }; // characters a URL must encode

interface Usage {
  upstreamCalls: number;
}

let folder: string;
let tls: TlsFiles;
let sandbox: Sandbox;
const children: ChildProcess[] = [];
beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'agw-tls-'));
  tls = await makeCertificates(folder);
  sandbox = await startSandbox({ port: 0, liveToday: false });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await sandbox?.close();
  rmSync(folder, { recursive: true, force: true });
});

/** A gateway process on `redisUrl` (CACHE=on), trusting the test's CA or not; its base URL once it listens. */
async function gatewayProcess(redisUrl: string, trustCa: boolean): Promise<string> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      HOST: '127.0.0.1',
      UPSTREAM_URL: sandbox.url,
      REDIS_URL: redisUrl,
      CACHE: 'on',
      LOG_LEVEL: 'warn',
      ...(trustCa ? { NODE_EXTRA_CA_CERTS: tls.ca } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stderr?.on('data', (chunk) => (output += chunk));
  return new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk) => {
      output += chunk;
      const found = /Gateway on (http:\/\/[^/\s]+)/.exec(output);
      if (found?.[1]) resolve(found[1]);
    });
    child.once('exit', () => reject(new Error(`the gateway exited:\n${output}`)));
  });
}

/** Website 1 through the gateway: its upstream calls. */
async function read(base: string): Promise<number> {
  const response = await postGraphQL<{ website: { id: string } }>(
    `${base}/graphql`,
    { query: '{ website(id: "1") { id domain } }' },
    { authorization: `Bearer ${KEY_1}` },
  );
  expect(dataOf(response).website.id).toBe('1');
  return (response.extensions as unknown as Usage).upstreamCalls;
}

/** /ready's word on the store. */
async function storeState(base: string): Promise<string> {
  const ready = (await (await fetch(`${base}/ready`)).json()) as { store?: string };
  return ready.store ?? '';
}

// The certificates are made by openssl, a cluster joined by redis-cli. Skipped without them outside CI (test/needs.ts).
for (const [name, start, needs] of [
  [
    'rediss-cluster:// (3 masters, 3 replicas)',
    (options: TopologyOptions) => startCluster(options),
    describeNeeding('redis-server', 'redis-cli', 'openssl'),
  ],
  [
    'rediss-sentinel:// (a primary, a replica, three sentinels)',
    (options: TopologyOptions) => startSentinels(options),
    describeNeeding('redis-server', 'openssl'),
  ],
] as const) {
  needs(`${name} with a user and a password`, () => {
    let topology: { url: string; close(): Promise<void> };
    /** The plain ports of the servers that hold data, for the test's own look at who is connected. */
    let dataPorts: number[];
    beforeAll(async () => {
      const started = await start({ tls, user: USER });
      topology = started;
      dataPorts = 'nodes' in started ? started.nodes.map((node) => node.port) : [started.primary.port];
    }, 60_000);
    afterAll(() => topology?.close());

    it('is reached over TLS as that user: a read stored through it is a hit', { timeout: 30_000 }, async () => {
      expect(topology.url).toMatch(/^rediss-(cluster|sentinel):\/\/gateway:s3cret%3A%2F%40@/);
      const base = await gatewayProcess(topology.url, true);
      expect(await read(base)).toBe(1);
      let calls = 1;
      for (let tries = 0; calls > 0 && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100)); // the entry is stored after the answer
        calls = await read(base);
      }
      expect(calls).toBe(0);
      expect(await storeState(base)).toBe('redis ready');
      // The gateway's connections are the user's.
      const users = await Promise.all(dataPorts.map((port) => onNode(port, async (admin) => String(await admin.client('LIST')))));
      expect(users.join('\n')).toMatch(/ user=gateway /);
    });

    it('is refused without the CA: the gateway answers from the install and says the store is not ready', { timeout: 30_000 }, async () => {
      const base = await gatewayProcess(topology.url, false);
      for (let i = 0; i < 3; i++) expect(await read(base)).toBe(1);
      expect(await storeState(base)).not.toBe('redis ready');
    });
  });
}
