// Load with faults: the sandbox answers slowly and sometimes fails, two keys are interleaved, and
// every answer is checked. Used by test/load.test.ts (bounded, in CI) and by `npm run soak` (long).
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Pool } from 'undici';
import { loadConfig } from '../config.js';
import { startSandbox } from '../sandbox/index.js';
import { createGateway } from '../http/server.js';

export interface SoakOptions {
  requests: number;
  concurrency: number;
  faultRate: number;
  latencyMs: number;
  jitterMs: number;
}

export interface SoakReport {
  requests: number;
  durationMs: number;
  /** Answers that were not a well-formed GraphQL response, or a 5xx. */
  malformed: string[];
  /** Data of one key seen in an answer to the other key. */
  leaks: string[];
  /** Answers with data, and with an error (injected faults surface as errors). */
  withData: number;
  withErrors: number;
  heapStartMb: number;
  heapEndMb: number;
  unhandledRejections: number;
}

const KEYS = ['sandbox-key-1', 'sandbox-key-2'] as const;

// A real collection before each heap reading, so the figures compare live memory, not garbage.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function collectGarbage(): void {
  gc();
}

const heapMb = (): number => Math.round((process.memoryUsage().heapUsed / 1024 / 1024) * 10) / 10;

export async function soak(options: SoakOptions): Promise<SoakReport> {
  let unhandledRejections = 0;
  const onUnhandled = (): void => {
    unhandledRejections++;
  };
  process.on('unhandledRejection', onUnhandled);

  const sandbox = await startSandbox({ port: 0 });
  const gateway = await createGateway(
    loadConfig({ PORT: '0', UPSTREAM_URL: sandbox.url, LOG_LEVEL: 'silent', UPSTREAM_BREAKER_RESET_MS: '200' }),
  );
  const client = new Pool(gateway.url, { connections: options.concurrency });
  const post = async (key: string, query: string) => {
    const response = await client.request({
      path: '/graphql',
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query }),
    });
    return { status: response.statusCode, text: await response.body.text() };
  };

  try {
    // Each key's own websites, read before any fault is switched on.
    const owned = new Map<string, Map<string, string>>();
    for (const key of KEYS) {
      const { text } = await post(key, '{ websites(perPage: 100) { nodes { id domain } } }');
      const nodes = (JSON.parse(text) as { data: { websites: { nodes: { id: string; domain: string }[] } } }).data.websites.nodes;
      owned.set(key, new Map(nodes.map((node) => [node.id, node.domain])));
    }
    const allIds = [...owned.values()].flatMap((sites) => [...sites.keys()]);
    const today = new Date();
    const monthAgo = new Date(today.getTime() - 29 * 86_400_000);
    const range = `from: "${monthAgo.toISOString().slice(0, 10)}", to: "${today.toISOString().slice(0, 10)}"`;

    sandbox.setKnobs({ faultRate: options.faultRate, latencyMs: options.latencyMs, jitterMs: options.jitterMs });
    collectGarbage();
    const heapStartMb = heapMb();
    const report: SoakReport = {
      requests: 0,
      durationMs: 0,
      malformed: [],
      leaks: [],
      withData: 0,
      withErrors: 0,
      heapStartMb,
      heapEndMb: 0,
      unhandledRejections: 0,
    };
    const started = performance.now();
    let next = 0;

    const worker = async (): Promise<void> => {
      while (next < options.requests) {
        const n = next++;
        // The sandbox keeps every request in its log: drop it now and then, or it is what grows.
        if (n % 1_000 === 0) sandbox.log.reset();
        const key = KEYS[n % 2]!;
        // Ask for any website, the other key's included: those must come back NOT_FOUND, never data.
        const id = allIds[(n >> 1) % allIds.length]!;
        const query = `{ website(id: "${id}") { id domain stats(name: COUNTRY, ${range}) { totalCount nodes { value } } } }`;
        const { status, text } = await post(key, query);
        report.requests++;
        let body: { data?: { website: { id: string; domain: string } | null } | null; errors?: { message?: unknown }[] };
        try {
          body = JSON.parse(text) as typeof body;
        } catch {
          report.malformed.push(`${status}: ${text.slice(0, 80)}`);
          continue;
        }
        const wellFormed =
          status < 500 &&
          ('data' in body || 'errors' in body) &&
          (body.errors === undefined || body.errors.every((error) => typeof error.message === 'string'));
        if (!wellFormed) report.malformed.push(`${status}: ${text.slice(0, 80)}`);
        if (body.errors?.length) report.withErrors++;
        const website = body.data?.website;
        if (website) {
          report.withData++;
          if (owned.get(key)!.get(website.id) !== website.domain) report.leaks.push(`${key} saw ${website.id} ${website.domain}`);
        }
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    report.durationMs = Math.round(performance.now() - started);

    // Let sockets and timers settle, then see whether memory came back.
    await new Promise((resolve) => setTimeout(resolve, 300));
    collectGarbage();
    report.heapEndMb = heapMb();
    report.unhandledRejections = unhandledRejections;
    return report;
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await client.close();
    await gateway.close();
    await sandbox.close();
  }
}

// `npm run soak`: SOAK_REQUESTS (default 200000), SOAK_CONCURRENCY (50), SOAK_FAULT_RATE (0.1).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = await soak({
    requests: Number(process.env.SOAK_REQUESTS ?? 200_000),
    concurrency: Number(process.env.SOAK_CONCURRENCY ?? 50),
    faultRate: Number(process.env.SOAK_FAULT_RATE ?? 0.1),
    latencyMs: 5,
    jitterMs: 10,
  });
  console.log(JSON.stringify({ ...report, malformed: report.malformed.slice(0, 5), leaks: report.leaks.slice(0, 5) }, null, 2));
  const healthy = report.malformed.length === 0 && report.leaks.length === 0 && report.unhandledRejections === 0;
  process.exit(healthy ? 0 : 1);
}
