// `npm run traffic`: visits sent to a running sandbox's today until stopped, and a clear refusal of a
// sandbox that is not there or a website it does not have.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { sendTraffic } from '../../src/sandbox/traffic.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, today: '2026-03-10' });
});
afterAll(() => sandbox.close());

async function todaysPageviews(): Promise<number> {
  const answer = await fetch(`${sandbox.url}/api/v1/stats/1?name=pageview&from=2026-03-10&to=2026-03-10`, {
    headers: { authorization: `Bearer ${sandbox.keys[0]}` },
  });
  const body = (await answer.json()) as { data: { count: number }[] };
  return body.data.reduce((sum, row) => sum + row.count, 0);
}

describe('npm run traffic', () => {
  it("adds each batch it reports to the website's today, until stopped", async () => {
    const before = await todaysPageviews();
    const stop = new AbortController();
    const batches: { visitors: number; pageviews: number }[] = [];
    await sendTraffic({
      url: sandbox.url,
      websiteId: 1,
      everyMs: 1,
      signal: stop.signal,
      onBatch: (batch) => {
        batches.push(batch);
        if (batches.length === 3) stop.abort();
      },
    });
    expect(batches).toHaveLength(3);
    for (const batch of batches) expect(batch.pageviews).toBeGreaterThanOrEqual(batch.visitors);
    expect(await todaysPageviews()).toBe(before + batches.reduce((sum, batch) => sum + batch.pageviews, 0));
  });

  it('says what is wrong with a website the sandbox does not have, or a sandbox that is not there', async () => {
    const options = { everyMs: 1, signal: new AbortController().signal, onBatch: () => undefined };
    await expect(sendTraffic({ ...options, url: sandbox.url, websiteId: 999 })).rejects.toThrow(
      'the sandbox refused the visits (404): {"message":"No website with id 999.","status":404}',
    );
    const gone = await startSandbox({ port: 0 });
    await gone.close();
    await expect(sendTraffic({ ...options, url: gone.url, websiteId: 1 })).rejects.toThrow(
      /^no sandbox answers at http:\/\/127\.0\.0\.1:\d+ \(is `npm start` running\?\)/,
    );
  });
});
