import { describe, expect, it } from 'vitest';
import { ATTACK_KINDS, type RequestAttackReport } from '../../bench/attacks.js';
import { soak } from '../../bench/soak.js';
import { expectEveryProcessEnded } from './short.js';

describe('load with faults', () => {
  expectEveryProcessEnded();

  // The long soak is `npm run soak` (200,000 requests at 50 at once); this one checks the harness and the same things.
  it('200 requests at 30 at once, 10% upstream faults, two keys: healthy, well-formed, no leak, the heap read', async () => {
    const report = await soak({ requests: 200, concurrency: 30, faultRate: 0.1, latencyMs: 2, jitterMs: 3 });
    console.log(
      `load: ${report.requests} requests in ${report.durationMs} ms; ${report.withData} with data, ${report.withErrors} with errors; ` +
        `heap ${report.heapStartMb} -> ${report.heapEndMb} MB`,
    );
    expect(report.requests).toBe(200);
    expect(report.malformed).toEqual([]);
    expect(report.leaks).toEqual([]);
    expect(report.unhandledRejections).toBe(0);
    // Half the requests ask for the other key's websites (NOT_FOUND); faults add errors on top. How many
    // of each, and how far the heap came back, are the soak's figures (`npm run soak`), not checked here.
    expect(report.withData).toBeGreaterThan(0);
    expect(report.withErrors).toBeGreaterThan(0);
    for (const figure of [report.heapStartMb, report.heapEndMb]) {
      expect(Number.isFinite(figure)).toBe(true);
      expect(figure).toBeGreaterThan(0);
    }
    // No attack was asked for: the whole load is one phase without them.
    expect(report.latency.attacked).toBeNull();
    expect(report.attacks).toEqual({ malformed: [] });
  }, 60_000);

  it('a small attack mix beside the load: every attack sent and answered, the load still checked and measured', async () => {
    const report = await soak({
      requests: 400,
      concurrency: 20,
      faultRate: 0.1,
      latencyMs: 2,
      jitterMs: 3,
      quietRequests: 200,
      // A chain short enough to be cheap with or without a limit on expanded fields.
      attacks: {
        kinds: ATTACK_KINDS,
        chainDepth: 12,
        trickleConnections: 4,
        stalledConnections: 2,
        liveStreams: 3,
        senders: 2,
        trickleByteEveryMs: { min: 200, max: 400 },
      },
      // Until the gateway has cut the trickled bodies after its receive timeout (node checks as often),
      // and they were opened again, and a stalled reader after its send timeout.
      attackUntil: ({ trickle, stalled }) =>
        (trickle?.closes['408'] ?? 0) >= 4 && (trickle?.opened ?? 0) > 4 && Object.values(stalled?.closes ?? {}).some((count) => count > 0),
      gatewayEnv: { REQUEST_RECEIVE_TIMEOUT_MS: '500', SEND_TIMEOUT_MS: '500' },
    });
    const { chain, documents, apq, disguised, live, trickle, stalled } = report.attacks;
    console.log(`attack mix: ${JSON.stringify({ latency: report.latency, attacks: report.attacks })}`);

    expect(report.requests).toBe(400);
    expect(report.malformed).toEqual([]);
    expect(report.leaks).toEqual([]);
    expect(report.unhandledRejections).toBe(0);
    expect(report.latency.warmup?.count).toBe(100);
    expect(report.latency.quiet?.count).toBe(100);
    expect(report.latency.attacked?.count).toBe(200);
    expect(report.rssAttacksStartMb).toBeGreaterThan(0);
    expect(report.rssPeakMb).toBeGreaterThanOrEqual(report.rssStartMb);
    expect(report.heapPeakMb).toBeGreaterThan(0);

    // Every request an attack sent has one counted answer, each a GraphQL answer with a status and a code.
    for (const attack of [chain, documents, apq, disguised] as (RequestAttackReport | undefined)[]) {
      expect(attack?.sent).toBeGreaterThan(0);
      const answers = Object.entries(attack?.answers ?? {});
      expect(answers.reduce((sum, [, count]) => sum + count, 0)).toBe(attack?.sent);
      for (const [label] of answers) expect(label).toMatch(/^\d{3} [A-Z_+a-z]+$/);
    }
    // Strangers with no key (documents) or a key the install refuses (apq) get no data.
    expect(Object.keys(documents?.answers ?? {})).toEqual(['200 UNAUTHENTICATED']);
    expect(apq?.answers['200 UNAUTHENTICATED']).toBeGreaterThan(0);
    expect(apq?.answers['200 data']).toBeUndefined();

    expect(trickle?.opened).toBeGreaterThan(4);
    expect(trickle?.bytesSent).toBeGreaterThanOrEqual(4);
    expect(trickle?.closes['408']).toBeGreaterThanOrEqual(4);
    expect(trickle?.lifetimeS?.count).toBe(Object.values(trickle?.closes ?? {}).reduce((sum, count) => sum + count, 0));

    // Queries disguised as streams are answered as queries (no key: UNAUTHENTICATED), hashes as unknown.
    expect(Object.keys(disguised?.answers ?? {}).sort()).toEqual(['200 PERSISTED_QUERY_NOT_FOUND', '200 UNAUTHENTICATED']);
    // Readers that never read are ended by the send timeout, and opened again.
    expect(stalled?.opened).toBeGreaterThanOrEqual(2);
    expect(Object.values(stalled?.closes ?? {}).reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
    // Churned streams under spellings of one key: each has a first event, data or why not (a 408: its
    // request came in over the half second the test gives, on a loaded machine).
    expect(live?.sent).toBeGreaterThan(0);
    for (const label of Object.keys(live?.answers ?? {}))
      expect(label).toMatch(/^200 (data|RATE_LIMITED|OVERLOADED)$|^408 REQUEST_TIMEOUT$|^closed before/);
  }, 60_000);
});
