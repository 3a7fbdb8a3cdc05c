// Load with faults: the sandbox answers slowly and sometimes fails, two keys are interleaved, and
// every answer is checked. With attacks, the load runs alone first, then goes on while strangers
// attack the gateway (attacks.ts), so the report compares the latency of the same requests with and
// without the attacks; it follows the gateway's memory throughout. The gateway runs as deployed, in a
// process of its own (dist/main.js, `npm run build` first): its memory is its own, and what the load
// and the attackers cost to make their requests is not charged to it. Used by test/bench/soak.test.ts
// (bounded, in CI) and by `npm run soak` (long).
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { startSandbox } from '../src/sandbox/index.js';
import {
  ATTACK_KINDS,
  DEFAULT_ATTACK_OPTIONS,
  distribution,
  errorCode,
  readAnswer,
  startAttacks,
  type AttackKind,
  type AttackOptions,
  type AttacksReport,
  type Distribution,
  type RunningAttacks,
} from './attacks.js';
import { settledMemory } from './live.js';
import { freePort, inspect, memoryMb, spawnServer, type ChildServer } from './processes.js';

export interface SoakOptions {
  requests: number;
  concurrency: number;
  faultRate: number;
  latencyMs: number;
  jitterMs: number;
  /** The attack mix (default: none). With attacks, the first `quietRequests` run without them. */
  attacks?: Partial<Omit<AttackOptions, 'answerTimeoutMs'>>;
  /**
   * Requests of the phase without attacks (default a tenth of `requests`); the rest run under attack.
   * Its first half, at most 1,000, warms the process up and is timed apart.
   */
  quietRequests?: number;
  /**
   * Once the load's requests are done, the attacks go on until this holds of their counts so far (looked
   * at every 100 ms; e.g. until the gateway has cut some trickled connections), at most `attackMaxMs`
   * (default 30 s) from their start. Without it they stop with the load.
   */
  attackUntil?: (attacks: AttacksReport) => boolean;
  attackMaxMs?: number;
  /** A request of the load or of an attack with no answer after this long counts as malformed (default 30 s). */
  answerTimeoutMs?: number;
  /** The gateway's environment (its limits and timeouts); the soak sets the port, upstream and log level. */
  gatewayEnv?: Record<string, string | undefined>;
  /** Node's options for the gateway's process (e.g. `--max-semi-space-size=16`). */
  gatewayNodeArgs?: readonly string[];
  /** The gateway to start (default dist/main.js; another build's, to compare). */
  gatewayScript?: string;
  /** What runs it instead of this Node (bench/container-node.sh: the image, under its memory limit). */
  gatewayNode?: string;
  /** Called with a line of progress every `progressEveryMs` (default 10 s). */
  onProgress?: (line: string) => void;
  progressEveryMs?: number;
}

export interface SoakReport {
  requests: number;
  durationMs: number;
  /** Answers that were not a well-formed GraphQL response, or a 5xx (503 OVERLOADED aside), or none; attacks' too. */
  malformed: string[];
  /** Data of one key seen in an answer to the other key. */
  leaks: string[];
  /** Answers with data, and with an error (injected faults surface as errors). */
  withData: number;
  withErrors: number;
  /** The load's answers by status and error codes (`200 data`, `200 UPSTREAM_ERROR`, `503 OVERLOADED`). */
  answers: Record<string, number>;
  /**
   * The gateway's live heap after a full collection (through its inspector), before and after the load;
   * the peak is sampled every second, garbage included.
   */
  heapStartMb: number;
  heapPeakMb: number;
  heapEndMb: number;
  /**
   * The gateway process's resident memory (VmRSS), sampled every 250 ms: before the load, when the attacks
   * start, when half the load under attack is done, its peak, at the end.
   */
  rssStartMb: number;
  rssAttacksStartMb: number | null;
  rssAttackedHalfMb: number | null;
  rssPeakMb: number;
  rssEndMb: number;
  /**
   * Milliseconds per request of the load: its first requests (the process warming up: JIT, the
   * sandbox's statistics, the read cache), the rest of the phase without attacks, and under attack.
   */
  latency: Record<Phase, Distribution | null>;
  attacks: AttacksReport;
  unhandledRejections: number;
}

type Phase = 'warmup' | 'quiet' | 'attacked';

const KEYS = ['sandbox-key-1', 'sandbox-key-2'] as const;

const mb = (value: number): number => Math.round(value * 10) / 10;

export async function soak(options: SoakOptions): Promise<SoakReport> {
  const answerTimeoutMs = options.answerTimeoutMs ?? DEFAULT_ATTACK_OPTIONS.answerTimeoutMs;
  const attackOptions: AttackOptions = { ...DEFAULT_ATTACK_OPTIONS, ...options.attacks, answerTimeoutMs };
  const quietRequests =
    attackOptions.kinds.length === 0
      ? options.requests
      : Math.min(options.requests, options.quietRequests ?? Math.ceil(options.requests / 10));
  const warmupRequests = Math.min(1_000, Math.floor(quietRequests / 2));
  let unhandledRejections = 0;
  const onUnhandled = (): void => {
    unhandledRejections++;
  };
  process.on('unhandledRejection', onUnhandled);

  const sandbox = await startSandbox({ port: 0 });
  let gateway: ChildServer | undefined;
  const inspectorPort = await freePort();
  try {
    gateway = await spawnServer({
      script: options.gatewayScript ?? 'dist/main.js',
      ...(options.gatewayNode ? { node: options.gatewayNode } : {}),
      env: definedOnly({
        UPSTREAM_BREAKER_RESET_MS: '200',
        // Nothing watches its /ready: it closes at once when the soak ends (DRAIN_DELAY_MS is 5 s by default).
        DRAIN_DELAY_MS: '0',
        ...options.gatewayEnv,
        HOST: '127.0.0.1',
        PORT: '0',
        UPSTREAM_URL: sandbox.url,
        LOG_LEVEL: 'silent',
        WORKERS: '1',
      }),
      ready: /Gateway on (http:\/\/[^\s,]+)\/graphql/,
      nodeArgs: [`--inspect=127.0.0.1:${inspectorPort}`, ...(options.gatewayNodeArgs ?? [])],
    });
  } catch (error) {
    process.off('unhandledRejection', onUnhandled);
    await sandbox.close();
    throw error;
  }
  const { pid } = gateway;
  const rssMb = (): number => mb(memoryMb(pid, 'VmRSS') ?? Number.NaN);
  // A hung request is a finding, not a reason for the soak to hang: it ends as "no answer".
  const client = new Pool(gateway.url, { connections: options.concurrency, headersTimeout: answerTimeoutMs, bodyTimeout: answerTimeoutMs });
  const post = async (key: string, query: string) => {
    const response = await client.request({
      path: '/graphql',
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query }),
    });
    return { status: response.statusCode, text: await response.body.text() };
  };
  let attacks: RunningAttacks | null = null;
  const memory = { rssPeak: 0, heapPeak: 0 };
  const sampleRss = (): void => {
    memory.rssPeak = Math.max(memory.rssPeak, memoryMb(pid, 'VmRSS') ?? 0);
  };
  const sampleHeap = (): void => {
    inspect(inspectorPort, [{ method: 'Runtime.getHeapUsage' }])
      .then(([usage]) => {
        memory.heapPeak = Math.max(memory.heapPeak, ((usage as { usedSize?: number }).usedSize ?? 0) / 1024 / 1024);
      })
      .catch(() => undefined);
  };
  // The live heap: after two full collections, through the inspector (the heap at once: no pause for the RSS).
  const liveHeapMb = async (): Promise<number> => {
    const notes: string[] = [];
    const { heapUsedMb } = await settledMemory(pid, inspectorPort, notes, 0);
    if (heapUsedMb === null) throw new Error(`the gateway's heap could not be read: ${notes.join('; ')}`);
    return mb(heapUsedMb);
  };
  const samplers = [setInterval(sampleRss, 250), setInterval(sampleHeap, 1_000)];
  let progress: NodeJS.Timeout | undefined;

  try {
    // Each key's own websites, read before any fault is switched on.
    const owned = new Map<string, Map<string, string>>();
    for (const key of KEYS) {
      const { text } = await post(key, '{ websites(perPage: 100) { nodes { id domain } } }');
      const nodes = (JSON.parse(text) as { data: { websites: { nodes: { id: string; domain: string }[] } } }).data.websites.nodes;
      owned.set(key, new Map(nodes.map((node) => [node.id, node.domain])));
    }
    const allIds = [...owned.values()].flatMap((sites) => [...sites.keys()]);
    // GraphiQL's page is rendered on its first view (a second of CPU, once): viewed now,
    // as on a gateway that has been up a while, so the stalled readers measure its sending.
    if (attackOptions.kinds.includes('stalled')) {
      const page = await client.request({ path: '/graphql', method: 'GET', headers: { accept: 'text/html' } });
      await page.body.dump({ limit: Number.POSITIVE_INFINITY });
    }
    const today = new Date();
    const monthAgo = new Date(today.getTime() - 29 * 86_400_000);
    const range = `from: "${monthAgo.toISOString().slice(0, 10)}", to: "${today.toISOString().slice(0, 10)}"`;

    sandbox.setKnobs({ faultRate: options.faultRate, latencyMs: options.latencyMs, jitterMs: options.jitterMs });
    // Allocated before the first reading, so the samples are not counted as growth.
    const latencies: Record<Phase, Float64Array> = {
      warmup: new Float64Array(warmupRequests),
      quiet: new Float64Array(quietRequests - warmupRequests),
      attacked: new Float64Array(options.requests - quietRequests),
    };
    const done: Record<Phase, number> = { warmup: 0, quiet: 0, attacked: 0 };
    const heapStartMb = await liveHeapMb();
    sampleRss();
    const rssStartMb = rssMb();
    const answers = new Map<string, number>();
    const report: SoakReport = {
      requests: 0,
      durationMs: 0,
      malformed: [],
      leaks: [],
      withData: 0,
      withErrors: 0,
      answers: {},
      heapStartMb,
      heapPeakMb: 0,
      heapEndMb: 0,
      rssStartMb,
      rssAttacksStartMb: null,
      rssAttackedHalfMb: null,
      rssPeakMb: 0,
      rssEndMb: 0,
      latency: { warmup: null, quiet: null, attacked: null },
      attacks: { malformed: [] },
      unhandledRejections: 0,
    };
    const started = performance.now();

    if (options.onProgress) {
      const onProgress = options.onProgress;
      const seen: Record<Phase, number> = { warmup: 0, quiet: 0, attacked: 0 };
      progress = setInterval(() => {
        const phase: Phase = attacks ? 'attacked' : done.quiet > 0 ? 'quiet' : 'warmup';
        // The latency of the requests answered since the previous line.
        const recent = distribution(latencies[phase].subarray(seen[phase], done[phase]));
        seen[phase] = done[phase];
        onProgress(
          `[soak ${Math.round((performance.now() - started) / 1_000)} s, ${phase}] ${report.requests}/${options.requests} requests, ` +
            `${report.malformed.length} malformed; gateway rss ${rssMb()} MB (peak ${mb(memory.rssPeak)}), heap peak ${mb(memory.heapPeak)} MB; ` +
            (recent ? `latency p50 ${recent.p50} p99 ${recent.p99} max ${recent.max} ms` : 'no answer') +
            (attacks ? `; ${attackSummary(attacks.snapshot())}` : ''),
        );
      }, options.progressEveryMs ?? 10_000);
    }

    let next = 0;
    const halfAttacked = quietRequests + Math.floor((options.requests - quietRequests) / 2);
    const worker = async (until: number, phase: Phase): Promise<void> => {
      while (next < until) {
        const n = next++;
        if (phase === 'attacked' && n === halfAttacked) report.rssAttackedHalfMb = rssMb();
        // The sandbox keeps every request in its log: drop it now and then, or it is what grows.
        if (n % 1_000 === 0) sandbox.log.reset();
        const key = KEYS[n % 2]!;
        // Ask for any website, the other key's included: those must come back NOT_FOUND, never data.
        const id = allIds[(n >> 1) % allIds.length]!;
        const query = `{ website(id: "${id}") { id domain stats(name: COUNTRY, ${range}) { totalCount nodes { value } } } }`;
        const sent = performance.now();
        let status: number;
        let text: string;
        try {
          ({ status, text } = await post(key, query));
        } catch (error) {
          const label = `no answer: ${errorCode(error)}`;
          report.malformed.push(label);
          answers.set(label, (answers.get(label) ?? 0) + 1);
          continue;
        } finally {
          latencies[phase][done[phase]++] = performance.now() - sent;
          report.requests++;
        }
        const answer = readAnswer(status, text);
        answers.set(answer.label, (answers.get(answer.label) ?? 0) + 1);
        if (!answer.wellFormed) report.malformed.push(`${status}: ${text.slice(0, 80)}`);
        if (answer.body?.errors?.length) report.withErrors++;
        const website = (answer.body?.data as { website?: { id: string; domain: string } | null } | null | undefined)?.website;
        if (website) {
          report.withData++;
          if (owned.get(key)!.get(website.id) !== website.domain) report.leaks.push(`${key} saw ${website.id} ${website.domain}`);
        }
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, () => worker(warmupRequests, 'warmup')));
    await Promise.all(Array.from({ length: options.concurrency }, () => worker(quietRequests, 'quiet')));
    if (attackOptions.kinds.length > 0) {
      report.rssAttacksStartMb = rssMb();
      attacks = startAttacks(gateway.url, attackOptions);
      const attackStarted = performance.now();
      await Promise.all(Array.from({ length: options.concurrency }, () => worker(options.requests, 'attacked')));
      const attacksEnd = attackStarted + (options.attackMaxMs ?? 30_000);
      const running = attacks;
      const goOn = (): boolean => options.attackUntil?.(running.snapshot()) === false && performance.now() < attacksEnd;
      while (goOn()) await new Promise((resolve) => setTimeout(resolve, 100));
      report.attacks = await attacks.stop();
      report.malformed.push(...report.attacks.malformed);
    }
    report.durationMs = Math.round(performance.now() - started);
    report.answers = Object.fromEntries(answers);
    report.latency = {
      warmup: distribution(latencies.warmup),
      quiet: distribution(latencies.quiet),
      attacked: distribution(latencies.attacked),
    };

    // Let sockets and timers settle, then see whether memory came back.
    await new Promise((resolve) => setTimeout(resolve, 300));
    report.heapEndMb = await liveHeapMb();
    sampleRss();
    report.rssEndMb = rssMb();
    report.heapPeakMb = mb(Math.max(memory.heapPeak, report.heapStartMb, report.heapEndMb));
    report.rssPeakMb = mb(memory.rssPeak);
    report.unhandledRejections = unhandledRejections;
    return report;
  } finally {
    for (const sampler of samplers) clearInterval(sampler);
    clearInterval(progress);
    process.off('unhandledRejection', onUnhandled);
    await attacks?.stop();
    await client.close();
    await gateway.stop();
    await sandbox.close();
  }
}

/** `chain 120 (200 FIELD_LIMIT_EXCEEDED 120)`-style counts, one attack after the other. */
function attackSummary(report: AttacksReport): string {
  const counts = (answers: Record<string, number>): string =>
    Object.entries(answers)
      .map(([label, count]) => `${label} ${count}`)
      .join(', ');
  const parts: string[] = [];
  for (const name of ['chain', 'documents', 'apq', 'disguised', 'live'] as const) {
    const attack = report[name];
    if (attack) parts.push(`${name} ${attack.sent} (${counts(attack.answers)})`);
  }
  for (const name of ['trickle', 'stalled'] as const) {
    const connections = report[name];
    if (connections) {
      parts.push(
        `${name} ${connections.opened} opened, ${connections.open} open (oldest ${connections.oldestOpenS} s), ` +
          `closed: ${counts(connections.closes) || 'none'}${connections.lifetimeS ? ` after p50 ${connections.lifetimeS.p50} s` : ''}`,
      );
    }
  }
  return parts.join('; ');
}

function summary(report: SoakReport): string {
  const latency = (phase: Distribution | null): string =>
    phase ? `${phase.count} requests, p50 ${phase.p50} p95 ${phase.p95} p99 ${phase.p99} max ${phase.max} ms` : 'none';
  return [
    `${report.requests} requests in ${(report.durationMs / 1_000).toFixed(1)} s; ${report.malformed.length} malformed, ` +
      `${report.leaks.length} leaks, ${report.unhandledRejections} unhandled rejections`,
    `answers: ${Object.entries(report.answers)
      .map(([label, count]) => `${label} ${count}`)
      .join(', ')}`,
    `gateway rss: start ${report.rssStartMb}, attacks start ${report.rssAttacksStartMb ?? '-'}, ` +
      `half the attacked load ${report.rssAttackedHalfMb ?? '-'}, peak ${report.rssPeakMb}, end ${report.rssEndMb} MB; ` +
      `gateway heap: start ${report.heapStartMb}, peak ${report.heapPeakMb} (garbage included), end ${report.heapEndMb} MB`,
    `latency warming up:      ${latency(report.latency.warmup)}`,
    `latency without attacks: ${latency(report.latency.quiet)}`,
    `latency under attack:    ${latency(report.latency.attacked)}`,
    `attacks: ${attackSummary(report.attacks) || 'none'}`,
  ].join('\n');
}

/** The environment without its unset variables (a child process's env takes strings only). */
function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** The soak's environment; every problem reported at once, as config.ts does for the gateway's. */
function optionsFromEnv(env: NodeJS.ProcessEnv): { options: SoakOptions; problems: string[] } {
  const problems: string[] = [];
  const number = (name: string, fallback: number, min: number, max: number, integer = true): number => {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
      problems.push(`${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return value;
  };
  const rawKinds = (env.SOAK_ATTACKS ?? ATTACK_KINDS.join(',')).trim().toLowerCase();
  const kinds =
    rawKinds === 'none'
      ? []
      : rawKinds
          .split(',')
          .map((kind) => kind.trim())
          .filter(Boolean);
  const unknown = kinds.filter((kind) => !(ATTACK_KINDS as readonly string[]).includes(kind));
  if (unknown.length > 0) problems.push(`SOAK_ATTACKS must be none or a list of ${ATTACK_KINDS.join(', ')}, got "${unknown.join(',')}"`);
  const requests = number('SOAK_REQUESTS', 200_000, 1, 100_000_000);
  const options: SoakOptions = {
    requests,
    concurrency: number('SOAK_CONCURRENCY', 50, 1, 10_000),
    faultRate: number('SOAK_FAULT_RATE', 0.1, 0, 1, false),
    latencyMs: 5,
    jitterMs: 10,
    quietRequests: number('SOAK_QUIET_REQUESTS', Math.ceil(requests / 10), 1, requests),
    attacks: {
      kinds: unknown.length > 0 ? [] : (kinds as AttackKind[]),
      chainDepth: number('SOAK_CHAIN_DEPTH', DEFAULT_ATTACK_OPTIONS.chainDepth, 1, 1_000),
      trickleConnections: number('SOAK_TRICKLE_CONNECTIONS', DEFAULT_ATTACK_OPTIONS.trickleConnections, 0, 10_000),
      stalledConnections: number('SOAK_STALLED_CONNECTIONS', DEFAULT_ATTACK_OPTIONS.stalledConnections, 0, 10_000),
      liveStreams: number('SOAK_LIVE_STREAMS', DEFAULT_ATTACK_OPTIONS.liveStreams, 0, 1_000),
      senders: number('SOAK_ATTACK_CONCURRENCY', DEFAULT_ATTACK_OPTIONS.senders, 1, 1_000),
    },
    gatewayEnv: env,
    gatewayNodeArgs: (env.SOAK_GATEWAY_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
    ...(env.SOAK_GATEWAY_SCRIPT ? { gatewayScript: env.SOAK_GATEWAY_SCRIPT } : {}),
    ...(env.SOAK_GATEWAY_NODE ? { gatewayNode: env.SOAK_GATEWAY_NODE } : {}),
    onProgress: (line) => console.error(line),
  };
  return { options, problems };
}

// `npm run soak`; its environment is described in docs/performance.md#soak.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { options, problems } = optionsFromEnv(process.env);
  if (problems.length > 0) {
    console.error(`Invalid soak settings:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    process.exit(2);
  }
  const report = await soak(options);
  console.log(summary(report));
  console.log(JSON.stringify({ ...report, malformed: report.malformed.slice(0, 5), leaks: report.leaks.slice(0, 5) }, null, 2));
  const healthy = report.malformed.length === 0 && report.leaks.length === 0 && report.unhandledRejections === 0;
  process.exit(healthy ? 0 : 1);
}
