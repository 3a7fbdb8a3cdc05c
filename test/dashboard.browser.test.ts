// The dashboard example (examples/dashboard/) in a real browser, as `npm run example` serves it: its
// serve.mjs builds it (types and trusted-documents manifest from schema.graphql, then the bundle), starts
// the built gateway with its sandbox and PERSISTED_DOCUMENTS, and serves the page. The page shows the
// figures the API gives, draws its chart, follows the period picker, "Load more" and the website search,
// shows a change in the sandbox live, says what is wrong with a bad key, a rate limit and the install
// down, sends hashes only, logs no error and fetches nothing from outside. It takes the README's screenshot (written with
// UPDATE_SCREENSHOTS=1). Skipped outside CI without chromium (test/needs.ts) or the example's packages;
// fails in CI.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type Browser } from './browser.js';
import { serveExample, stopExample, type ServedExample } from './dashboard-example.js';
import { ROOT } from './docs.js';
import { describeNeeding } from './needs.js';
import { inCi } from './system-programs.js';

// The example's own packages (`npm ci --prefix examples/dashboard`, which .ci/run and `npm run example`
// do): without them, outside CI, the suite is skipped and says so; in CI it fails, naming the command.
const DASHBOARD_INSTALL = 'npm ci --prefix examples/dashboard';
const dashboardMissing = !existsSync(join(ROOT, 'examples', 'dashboard', 'node_modules', 'vite', 'package.json'));
if (dashboardMissing && !inCi)
  console.warn(`The dashboard example's suite is skipped: its packages are not installed (${DASHBOARD_INSTALL}).`);

/** A page view or an update on two shared cores. */
const PAGE_TIMEOUT_MS = 60_000;
/** serve.mjs builds the example (codegen, tsc, vite) before it serves it. */
const START_TIMEOUT_MS = 180_000;
const SCREENSHOT = join(ROOT, 'examples', 'dashboard', 'screenshot.png');

/** The text of an element, its spaces as spaces. */
const textOf = async (page: Page, selector: string): Promise<string> =>
  ((await page.locator(selector).first().textContent()) ?? '').replace(/\s+/g, ' ').trim();

(dashboardMissing && !inCi ? describe.skip : describeNeeding('chromium'))('the dashboard example in chromium', () => {
  let served: ServedExample;
  let browser: Browser;
  let page: Page;
  /** Every request the browser made, as `METHOD url`, and the bodies of its POSTs to the gateway. */
  const requests: string[] = [];
  const graphqlBodies: string[] = [];
  /** Errors of the page: console errors and uncaught exceptions. */
  const consoleErrors: string[] = [];

  /** What the gateway answers `query` with the demo key: the figures the page must show. */
  async function api<T>(query: string, variables: Record<string, unknown>): Promise<T> {
    const response = await fetch(served.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${served.demoKey}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: T; errors?: unknown };
    if (body.data === undefined || body.errors !== undefined) throw new Error(`the gateway answered ${JSON.stringify(body)}`);
    return body.data;
  }

  interface Summary {
    website: { summary: { current: { visitors: number; pageviews: number } } };
  }
  const SUMMARY =
    'query ($id: ID!, $period: Period, $from: Date, $to: Date) { website(id: $id) { summary(period: $period, from: $from, to: $to) { current { visitors pageviews } } } }';
  const formatted = (count: number): string => count.toLocaleString('en-US');

  /** Shows a custom range of days, as the picker's form takes it. */
  async function showRange(range: { from: string; to: string }): Promise<void> {
    await page.locator('select[name=period]').selectOption('CUSTOM');
    await page.locator('input[name=from]').fill(range.from);
    await page.locator('input[name=to]').fill(range.to);
    await page.getByRole('button', { name: 'Show' }).click();
  }

  /** The website the switcher shows. */
  const websiteId = (): Promise<string> => page.locator('select[name=website]').inputValue();

  beforeAll(async () => {
    if (inCi && dashboardMissing) {
      throw new Error(`the dashboard example's packages are not installed, and CI is set: the suite must run here (${DASHBOARD_INSTALL}).`);
    }
    served = await serveExample(ROOT, { LIVE_INTERVAL_S: '1' });
    browser = await launchChromium(PAGE_TIMEOUT_MS, { viewport: { width: 1200, height: 900 }, locale: 'en-US' });
    browser.context.on('request', (request) => {
      requests.push(`${request.method()} ${request.url()}`);
      if (request.url() === served.endpoint && request.method() === 'POST') graphqlBodies.push(request.postData() ?? '');
    });
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(error.message));
  }, START_TIMEOUT_MS + PAGE_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    if (served) await stopExample(served);
  });

  it(
    "opens with the demo key, and shows the first website's figures the API gives, its chart drawn",
    async () => {
      await page.goto(served.dashboard);
      await page.locator('.total[data-metric=visitors] .value').waitFor();
      expect(await page.locator('input[name=apiKey]').inputValue()).toBe(served.demoKey);
      const id = await websiteId();
      expect(id).toBe('1');
      const { website } = await api<Summary>(SUMMARY, { id, period: 'LAST_30_DAYS' });
      expect(website.summary.current.visitors).toBeGreaterThan(0);
      expect(await textOf(page, '.total[data-metric=visitors] .value')).toBe(formatted(website.summary.current.visitors));
      expect(await textOf(page, '.total[data-metric=pageviews] .value')).toBe(formatted(website.summary.current.pageviews));
      expect(await textOf(page, '.overview .range')).toMatch(/; changes compare \S+ to \S+ with \S+ to \S+$/);
      // The last 30 days reach today: compared by the days that are over, and said so.
      expect(await textOf(page, '.total[data-metric=visitors] .change')).toMatch(
        /^([+-]\d+(\.\d)?%|0%) vs previous period, same days so far$/,
      );

      const top = await api<{ website: { stats: { nodes: { label: string; count: number }[] } } }>(
        'query ($id: ID!) { website(id: $id) { stats(name: PAGE, period: LAST_30_DAYS) { nodes { label count } } } }',
        { id },
      );
      const [first] = top.website.stats.nodes;
      await page.locator('[data-stat=PAGE] .row').first().waitFor();
      expect(await textOf(page, '[data-stat=PAGE] .row .name')).toBe(first?.label);
      expect(await textOf(page, '[data-stat=PAGE] .row .number')).toBe(formatted(first?.count ?? 0));
      for (const stat of ['REFERRER', 'COUNTRY', 'BROWSER']) await page.locator(`[data-stat=${stat}] .row`).first().waitFor();

      // The chart: four series in its legend (two of the previous period), painted on its canvas.
      await expect.poll(() => page.locator('.chart .u-legend .u-series').count(), { timeout: PAGE_TIMEOUT_MS }).toBe(4);
      const painted = await page.locator('.chart canvas').evaluate((canvas: HTMLCanvasElement) => {
        const { data } = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height) ?? { data: [] };
        let count = 0;
        for (let i = 3; i < data.length; i += 4) if ((data[i] ?? 0) > 0) count++;
        return count;
      });
      expect(painted).toBeGreaterThan(1000);
    },
    2 * PAGE_TIMEOUT_MS,
  );

  it(
    'follows the period picker, a custom range included',
    async () => {
      const id = await websiteId();
      const week = (await api<Summary>(SUMMARY, { id, period: 'LAST_7_DAYS' })).website.summary.current;
      await page.locator('select[name=period]').selectOption('LAST_7_DAYS');
      await expect
        .poll(() => textOf(page, '.total[data-metric=visitors] .value'), { timeout: PAGE_TIMEOUT_MS })
        .toBe(formatted(week.visitors));
      expect(await textOf(page, '.total[data-metric=pageviews] .value')).toBe(formatted(week.pageviews));

      const range = { from: '2026-01-01', to: '2026-01-31' };
      const custom = (await api<Summary>(SUMMARY, { id, ...range })).website.summary.current;
      await showRange(range);
      await expect.poll(() => textOf(page, '.overview .range'), { timeout: PAGE_TIMEOUT_MS }).toContain(`${range.from} to ${range.to}`);
      expect(await textOf(page, '.total[data-metric=visitors] .value')).toBe(formatted(custom.visitors));
      await page.locator('select[name=period]').selectOption('LAST_30_DAYS');
      await page.locator('.total[data-metric=visitors] .value').waitFor();
    },
    2 * PAGE_TIMEOUT_MS,
  );

  it(
    'shows every period of the picker right: its figures, a chart within it with whole-day ticks, a labelled or partial comparison, in one request',
    async () => {
      const id = await websiteId();
      interface Compared {
        website: {
          summary: {
            partial: boolean;
            changeBasis: { current: { from: string; to: string } } | null;
            current: { visitors: number; range: { from: string; to: string } };
            previous: { visitors: number; range: { from: string; to: string } };
          };
        };
      }
      const COMPARED =
        'query ($id: ID!, $period: Period, $compare: Comparison) { website(id: $id) { summary(period: $period, compare: $compare) { partial changeBasis { current { from to } } current { visitors range { from to } } previous { visitors range { from to } } } } }';
      const periods = await page
        .locator('select[name=period] option')
        .evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value).filter((value) => value !== 'CUSTOM'));
      expect(periods).toHaveLength(10);
      const shots = process.env.DASHBOARD_SHOTS_DIR;
      if (shots) mkdirSync(shots, { recursive: true });
      const day = (date: string): number => Date.parse(`${date}T00:00:00Z`) / 1000;
      for (const period of periods) {
        // What the page compares with: the calendar year before for a year, else the days just before.
        const compare = period === 'LAST_YEAR' || period === 'THIS_YEAR' ? 'PREVIOUS_YEAR' : 'PREVIOUS_PERIOD';
        const { summary } = (await api<Compared>(COMPARED, { id, period, compare })).website;
        const { from, to } = summary.current.range;
        // Demo data for the period and the one it is compared with.
        expect(summary.current.visitors, period).toBeGreaterThan(0);
        expect(summary.previous.visitors, period).toBeGreaterThan(0);
        const overviews = graphqlBodies.length;
        await page.locator('select[name=period]').selectOption(period);
        await expect
          .poll(() => textOf(page, '.overview .range'), { timeout: PAGE_TIMEOUT_MS })
          .toMatch(new RegExp(`^${from}( to ${to})?\\b`));
        await expect
          .poll(() => textOf(page, '.total[data-metric=visitors] .value'), { timeout: PAGE_TIMEOUT_MS })
          .toBe(formatted(summary.current.visitors));
        const chart = page.locator('.chart');
        await expect.poll(() => chart.getAttribute('data-ticks'), { timeout: PAGE_TIMEOUT_MS }).not.toBeNull();
        await expect.poll(() => chart.locator('.u-legend .u-series').count(), { timeout: PAGE_TIMEOUT_MS }).toBe(4);
        // The axis spans the period's days (a single day: that day, half a day either side), ticks whole days.
        const [min, max] = [Number(await chart.getAttribute('data-x-min')), Number(await chart.getAttribute('data-x-max'))];
        expect(min, period).toBeGreaterThanOrEqual(day(from) - 43_200);
        expect(max, period).toBeLessThanOrEqual(day(to) + 43_200);
        const ticks = ((await chart.getAttribute('data-ticks')) ?? '').split(' ').map(Number);
        for (const tick of ticks) expect(tick >= min && tick <= max, `${period}: tick ${tick} in ${min}..${max}`).toBe(true);
        const tickDays = Number(await chart.getAttribute('data-tick-days'));
        expect(Number.isInteger(tickDays) && tickDays >= 1, `${period}: ticks every ${tickDays} days`).toBe(true);
        if (period === 'LAST_7_DAYS') expect(tickDays).toBe(1);
        // The comparison: a percentage and what it is against, or partial with none.
        const change = await textOf(page, '.total[data-metric=visitors] .change');
        if (summary.changeBasis === null) expect(change, period).toMatch(/^partial: /);
        else if (period === 'LAST_YEAR')
          expect(change).toMatch(new RegExp(`^([+-]\\d+(\\.\\d)?%|0%) vs ${summary.previous.range.from.slice(0, 4)}$`));
        else expect(change, period).toMatch(/^([+-]\d+(\.\d)?%|0%) vs (previous period|\d{4})/);
        // One request for the overview (none when urql's cache has it from before): no second one for the
        // previous period's days, nothing but the overview and the top lists.
        const sent = graphqlBodies.slice(overviews).map((body) => (JSON.parse(body) as { operationName?: string }).operationName);
        expect(sent.filter((name) => name === 'Overview').length, period).toBeLessThanOrEqual(1);
        expect(
          sent.filter((name) => name !== 'Overview' && name !== 'Top'),
          period,
        ).toEqual([]);
        if (period === 'TODAY') expect(sent).toContain('Overview');
        const screenshot = await page.screenshot({ fullPage: true });
        expect(screenshot.subarray(1, 4).toString()).toBe('PNG');
        if (shots) writeFileSync(join(shots, `${period.toLowerCase()}.png`), screenshot);
      }
      await page.locator('select[name=period]').selectOption('LAST_30_DAYS');
      await page.locator('.total[data-metric=visitors] .value').waitFor();
    },
    12 * PAGE_TIMEOUT_MS,
  );

  it(
    'loads more countries under the first ten',
    async () => {
      const countries = page.locator('[data-stat=COUNTRY] .row');
      await expect.poll(() => countries.count(), { timeout: PAGE_TIMEOUT_MS }).toBe(10);
      await page.locator('[data-stat=COUNTRY]').getByRole('button', { name: 'Load more' }).click();
      await expect.poll(() => countries.count(), { timeout: PAGE_TIMEOUT_MS }).toBeGreaterThan(10);
      const labels = await countries.locator('.name').allTextContents();
      expect(new Set(labels).size).toBe(labels.length);
    },
    2 * PAGE_TIMEOUT_MS,
  );

  it(
    'shows a change in the sandbox live, with what changed',
    async () => {
      const visitors = page.locator('[data-live=visitors]');
      await visitors.waitFor();
      const before = Number((await visitors.textContent())?.replaceAll(',', ''));
      const overviewBefore = Number((await textOf(page, '.total[data-metric=visitors] .value')).replaceAll(',', ''));
      const added = await fetch(`${served.sandbox}/__sandbox/traffic`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ websiteId: Number(await websiteId()), visitors: 1000, pageviews: 1000, page: '/pricing' }),
      });
      expect(added.status).toBe(204);
      // Today's figures also grow by themselves once a minute: at least the visits added.
      await expect
        .poll(async () => Number((await visitors.textContent())?.replaceAll(',', '')), { timeout: PAGE_TIMEOUT_MS })
        .toBeGreaterThanOrEqual(before + 1000);
      // The overview holds today (the last 30 days): read again on the change, its total up by the visits.
      await expect
        .poll(async () => Number((await textOf(page, '.total[data-metric=visitors] .value')).replaceAll(',', '')), {
          timeout: PAGE_TIMEOUT_MS,
        })
        .toBeGreaterThanOrEqual(overviewBefore + 1000);
      // The line of the change: when, and what (today's figures may have grown by themselves in the same poll).
      await expect
        .poll(() => textOf(page, '.live .changes'), { timeout: PAGE_TIMEOUT_MS })
        .toMatch(/\d\d:\d\d:\d\d \+1,\d{3} visitors, \+1,\d{3} pageviews \(.*\/pricing \+1,\d{3}/);

      const screenshot = await page.screenshot({ fullPage: true });
      expect(screenshot.subarray(1, 4).toString()).toBe('PNG');
      if (process.env.UPDATE_SCREENSHOTS === '1') writeFileSync(SCREENSHOT, screenshot);
    },
    2 * PAGE_TIMEOUT_MS,
  );

  it(
    'finds a website by its domain, and shows its figures when chosen',
    async () => {
      const all = await api<{ websites: { nodes: { id: string; domain: string }[] } }>(
        '{ websites(perPage: 25) { nodes { id domain } } }',
        {},
      );
      const other = all.websites.nodes.find((website) => website.id !== '1');
      if (other === undefined) throw new Error('the demo key has one website only');
      const found = await api<{ websites: { nodes: { domain: string }[] } }>(
        'query ($search: String) { websites(search: $search, perPage: 25) { nodes { domain } } }',
        { search: other.domain },
      );
      await page.locator('input[type=search]').fill(other.domain);
      const options = page.locator('select[name=website] option');
      await expect
        .poll(async () => (await options.allTextContents()).sort(), { timeout: PAGE_TIMEOUT_MS })
        .toEqual(found.websites.nodes.map((website) => website.domain).sort());
      await page.locator('select[name=website]').selectOption(other.id);
      const { website } = await api<Summary>(SUMMARY, { id: other.id, period: 'LAST_30_DAYS' });
      await expect
        .poll(() => textOf(page, '.total[data-metric=visitors] .value'), { timeout: PAGE_TIMEOUT_MS })
        .toBe(formatted(website.summary.current.visitors));
      await page.locator('input[type=search]').fill('');
    },
    2 * PAGE_TIMEOUT_MS,
  );

  it('logged no error, fetched nothing from outside, and sent trusted documents by hash only', () => {
    expect(consoleErrors).toEqual([]);
    const origins = [new URL(served.dashboard).origin, new URL(served.endpoint).origin];
    expect(requests.filter((request) => !origins.some((origin) => request.split(' ')[1]?.startsWith(`${origin}/`)))).toEqual([]);
    expect(graphqlBodies.length).toBeGreaterThan(6);
    for (const body of graphqlBodies) {
      const params = JSON.parse(body) as { query?: string; extensions?: { persistedQuery?: { sha256Hash?: string } } };
      expect(params.query, body).toBeUndefined();
      expect(params.extensions?.persistedQuery?.sha256Hash, body).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it(
    'says the key was refused when it is wrong, and keeps it for the tab only',
    async () => {
      await page.locator('input[name=apiKey]').fill('not-a-key');
      await page.getByRole('button', { name: 'Use key' }).click();
      await expect.poll(() => textOf(page, '[role=alert]'), { timeout: PAGE_TIMEOUT_MS }).toContain('This API key was refused');
      expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual(['not-a-key']);
      expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([]);
      await page.locator('input[name=apiKey]').fill(served.demoKey);
      await page.getByRole('button', { name: 'Use key' }).click();
      await page.locator('.total[data-metric=visitors] .value').waitFor();
    },
    2 * PAGE_TIMEOUT_MS,
  );
  it(
    'says so when the install rate-limits the key, with the time to wait',
    async () => {
      // The install answers 429 to the next calls (the live poller waits once it got one): the
      // statistics of a range not read yet (every period of the picker was) are refused.
      const faults = Array.from({ length: 40 }, () => ({ kind: 'status', status: 429, headers: { 'retry-after': '30' } }));
      const scripted = await fetch(`${served.sandbox}/__sandbox/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(faults),
      });
      expect(scripted.status).toBe(204);
      await showRange({ from: '2025-05-01', to: '2025-05-31' });
      await expect.poll(() => textOf(page, '[role=alert]'), { timeout: PAGE_TIMEOUT_MS }).toContain('try again in 30 s');
    },
    2 * PAGE_TIMEOUT_MS,
  );
  it(
    'says so when the install is down',
    async () => {
      // The rate limit's faults left are dropped; then the install answers 503 to every call (a read is
      // tried again, then the gateway's breaker opens): a period not read yet cannot be shown.
      const dropped = await fetch(`${served.sandbox}/__sandbox/faults`, { method: 'DELETE' });
      expect(dropped.status).toBe(204);
      const faults = Array.from({ length: 60 }, () => ({ kind: 'status', status: 503 }));
      const scripted = await fetch(`${served.sandbox}/__sandbox/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(faults),
      });
      expect(scripted.status).toBe(204);
      await showRange({ from: '2025-04-01', to: '2025-04-30' });
      await expect
        .poll(() => textOf(page, '[role=alert]'), { timeout: PAGE_TIMEOUT_MS })
        .toContain('The analytics install is not answering properly');
      await fetch(`${served.sandbox}/__sandbox/faults`, { method: 'DELETE' });
    },
    2 * PAGE_TIMEOUT_MS,
  );
});
