// GraphiQL in a real browser: Debian's chromium, driven by playwright-core (no browser is downloaded),
// against a gateway in sandbox mode, as `npm start` serves it. The page loads with no request outside
// the gateway (every request is recorded), the demo key is in its headers, and running the dashboard,
// a subscription and a refused query shows what a user would see. Without chromium the suite is
// skipped outside CI (the run says so: test/needs.ts, test/suite-skip.ts) and fails at once in CI.
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EXAMPLE_QUERY } from '../src/graphql/plugins/use-graphiql-page.js';
import { launchChromium, type Browser } from './browser.js';
import { KEY_1, dataOf, startStack, type Stack } from './fixture.js';
import { describeNeeding } from './needs.js';

/** What an editor shows, its spaces as spaces (the editor renders no-break spaces). */
const textOf = (text: string | null): string => (text ?? '').replace(/\s+/g, ' ');

/** A page view: GraphiQL's bundle is megabytes of JavaScript, parsed on two shared cores. */
const PAGE_TIMEOUT_MS = 60_000;

const SUBSCRIPTION = 'subscription Today { website(id: "1") { id today: stats(name: VISITOR, period: TODAY) { totalCount sum } } }';
const REFUSED = 'query Refused { websites(perPage: 7) { totalCount } }';

describeNeeding('chromium')('GraphiQL in chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Every request the browser made, page and workers, as `METHOD url`. */
  const requests: string[] = [];
  /** The headers of the page's GraphQL requests. */
  const graphqlHeaders: Record<string, string>[] = [];

  beforeAll(async () => {
    // Today as the sandbox's clock has it (not pinned), as under `npm start`: the live view has data.
    // The read cache on, as under `npm start`: a second run of the dashboard is answered by it.
    stack = await startStack({ sandbox: { today: undefined }, gateway: { demoKey: KEY_1 }, env: { LIVE_INTERVAL_S: '1', CACHE: 'on' } });
    browser = await launchChromium(PAGE_TIMEOUT_MS);
    context = browser.context;
    context.on('request', (request) => {
      requests.push(`${request.method()} ${request.url()}`);
      if (request.url().startsWith(stack.endpoint) && request.method() === 'POST') graphqlHeaders.push(request.headers());
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
  }, 2 * PAGE_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  /**
   * Runs `query` in GraphiQL opened on it, or (null) what the page shows now, as a user presses the run
   * button; answers the result pane once it holds `until`. A new visit to the page restores what the
   * last one left, so the page's own query is run on the first visit.
   */
  async function run(query: string | null, until: string): Promise<string> {
    if (query !== null) await page.goto(`${stack.endpoint}?query=${encodeURIComponent(query)}`);
    // Run only once the editor holds the operation: before that, GraphiQL would send an empty document.
    const opening = (query ?? EXAMPLE_QUERY.split('\n')[1] ?? '').slice(0, 20);
    const editor = page.locator('.graphiql-query-editor');
    await expect.poll(async () => textOf(await editor.textContent()), { timeout: PAGE_TIMEOUT_MS, interval: 100 }).toContain(opening);
    await page.locator('.graphiql-execute-button').click();
    const result = page.locator('.result-window');
    await expect.poll(async () => textOf(await result.textContent()), { timeout: PAGE_TIMEOUT_MS, interval: 100 }).toContain(until);
    return textOf(await result.textContent());
  }

  /** The requests that went anywhere but the gateway's origin (blob: URLs of its origin are its own workers). */
  function outside(): string[] {
    const origin = new URL(stack.gateway.url).origin;
    return requests.filter((request) => {
      const url = request.slice(request.indexOf(' ') + 1);
      return !(url.startsWith(`${origin}/`) || url.startsWith(`blob:${origin}/`) || url.startsWith('data:'));
    });
  }

  it(
    'loads from the gateway alone, opens on the dashboard, with the demo key in its headers',
    async () => {
      await page.goto(stack.endpoint);
      await page.locator('.graphiql-execute-button').waitFor();
      expect(textOf(await page.locator('.graphiql-query-editor').textContent())).toContain('query Dashboard');
      // The schema's introspection, sent as every later request: with the key GraphiQL shows in its headers.
      await expect.poll(() => graphqlHeaders.length, { timeout: PAGE_TIMEOUT_MS }).toBeGreaterThan(0);
      expect(graphqlHeaders[0]?.authorization).toBe(`Bearer ${KEY_1}`);
      await page.getByText('Headers', { exact: true }).click();
      expect(textOf(await page.locator('.graphiql-editor-tool').textContent())).toContain(`Bearer ${KEY_1}`);
      expect(requests.length).toBeGreaterThan(1);
      expect(outside()).toEqual([]);
    },
    2 * PAGE_TIMEOUT_MS,
  );

  /** What the "Upstream calls" panel shows of each call: its cache label, its bar's left edge, its fields. */
  async function panelCalls(): Promise<{ cache: string; left: number; fields: string }[]> {
    return page.locator('.gateway-trace-call').evaluateAll((rows) =>
      rows.map((row) => ({
        cache: row.getAttribute('data-cache') ?? '',
        left: Number.parseFloat((row.querySelector('.gateway-trace-bar') as HTMLElement | null)?.style.left ?? 'NaN'),
        fields: row.querySelector('.gateway-trace-fields')?.textContent ?? '',
      })),
    );
  }

  it(
    "shows the dashboard's upstream calls in its panel, then the cache's hits on a second run",
    async () => {
      await run(null, '"domain"');
      // GraphiQL asked for the trace with every run.
      expect(graphqlHeaders.at(-1)?.['x-gateway-trace']).toBe('1');
      await page.locator('.graphiql-sidebar button[aria-label="Show Upstream calls"]').click();
      const panel = page.locator('.gateway-trace');
      await expect.poll(async () => (await panelCalls()).length, { timeout: PAGE_TIMEOUT_MS }).toBeGreaterThan(5);
      const first = await panelCalls();
      expect(first.every((call) => call.cache === 'written' || call.cache === 'miss')).toBe(true);
      // Drawn to scale in the order they started.
      const lefts = first.map((call) => call.left);
      expect(lefts.every((left) => left >= 0 && left <= 100)).toBe(true);
      expect(lefts).toEqual([...lefts].sort((a, b) => a - b));
      expect(first.map((call) => call.fields).join(' ')).toContain('website.pages');
      expect(textOf(await panel.locator('.gateway-trace-totals').textContent())).toMatch(/^\d+ calls · 0 cache hits/);

      await page.locator('.graphiql-execute-button').click();
      await expect
        .poll(async () => (await panelCalls()).map((call) => call.cache), { timeout: PAGE_TIMEOUT_MS, interval: 100 })
        .toEqual(first.map(() => 'hit'));
      expect(textOf(await panel.locator('.gateway-trace-totals').textContent())).toMatch(
        new RegExp(`^0 calls · ${first.length} cache hits`),
      );
    },
    2 * PAGE_TIMEOUT_MS,
  );

  it(
    'runs the dashboard it opened on and shows its data',
    async () => {
      const { domain } = dataOf(await stack.gql<{ website: { domain: string } }>(EXAMPLE_QUERY)).website;
      const shown = await run(null, `"domain": "${domain}"`);
      expect(shown).toContain('"data": { "website": { "id": "1"');
      expect(shown).toMatch(/"visitors": \{ "total": [1-9]\d*/);
      expect(shown).not.toContain('"errors"');
    },
    2 * PAGE_TIMEOUT_MS,
  );

  it(
    'runs a subscription and shows its first payload',
    async () => {
      const shown = await run(SUBSCRIPTION, '"sum"');
      expect(shown).toMatch(/"today": \{ "totalCount": \d+, "sum": \d+ \}/);
      expect(shown).not.toContain('"errors"');
      // GraphiQL subscribed over SSE, as docs/live.md says.
      expect(requests.some((request) => request.startsWith('GET ') && request.includes('query=subscription'))).toBe(true);
    },
    2 * PAGE_TIMEOUT_MS,
  );

  it(
    'runs a refused query and shows its error',
    async () => {
      const shown = await run(REFUSED, 'BAD_USER_INPUT');
      expect(shown).toContain('"message": "websites: perPage must be one of 10, 25, 50, 100, got 7."');
      expect(shown).toContain('"upstreamCalls": 0');
    },
    2 * PAGE_TIMEOUT_MS,
  );

  it(
    'says in its panel when the trace was cut: the fields left out of a call, and the trace marked',
    async () => {
      const aliases = Array.from({ length: 12 }, (_, index) => `a${index}: website(id: "1") { id }`).join(' ');
      await run(`query Many { ${aliases} }`, '"a0"');
      const panel = page.locator('.gateway-trace');
      await expect
        .poll(async () => textOf(await panel.locator('.gateway-trace-cut').textContent()), { timeout: PAGE_TIMEOUT_MS })
        .toBe('Cut to its bounds: 0 calls and 2 field paths left out (the totals count every call).');
      expect((await panelCalls()).map((call) => call.fields)).toEqual(['a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 and 2 more']);
    },
    2 * PAGE_TIMEOUT_MS,
  );

  it(
    'runs under a policy naming its own script by its hash: a <script> and an inline handler put in the page do not run',
    async () => {
      // A page of its own: the other tests' page keeps its editor's state.
      const page = await context.newPage();
      page.setDefaultTimeout(PAGE_TIMEOUT_MS);
      const response = await page.goto(stack.endpoint);
      const policy = (await response?.allHeaders())?.['content-security-policy'] ?? '';
      const scripts = /(?:^|; )script-src ([^;]*)/.exec(policy)?.[1] ?? '';
      expect(scripts).toMatch(/^'sha256-[A-Za-z0-9+/]{43}='$/);
      expect(policy).not.toMatch(/unsafe-eval/);
      await page.locator('.graphiql-execute-button').waitFor();
      // Each of the two either runs (and says so) or is refused (a violation event): wait for both outcomes.
      const outcome = await page.evaluate(
        () =>
          new Promise<{ refused: string[]; scriptRan: boolean; handlerRan: boolean }>((resolve) => {
            const flags = globalThis as unknown as { agwScriptRan?: boolean; agwHandlerRan?: boolean; agwSeen?: () => void };
            const refused: string[] = [];
            const seen = (): void => {
              const outcomes = refused.length + (flags.agwScriptRan ? 1 : 0) + (flags.agwHandlerRan ? 1 : 0);
              if (outcomes >= 2)
                resolve({ refused: refused.sort(), scriptRan: flags.agwScriptRan === true, handlerRan: flags.agwHandlerRan === true });
            };
            flags.agwSeen = seen;
            document.addEventListener('securitypolicyviolation', (event) => {
              refused.push(event.effectiveDirective);
              seen();
            });
            const box = document.createElement('div');
            box.innerHTML = '<img src="data:," onerror="globalThis.agwHandlerRan = true; globalThis.agwSeen()">';
            document.body.append(box);
            const script = document.createElement('script');
            script.textContent = 'globalThis.agwScriptRan = true; globalThis.agwSeen();';
            document.body.append(script);
          }),
      );
      expect(outcome).toEqual({ refused: ['script-src-attr', 'script-src-elem'], scriptRan: false, handlerRan: false });
      await page.close();
    },
    2 * PAGE_TIMEOUT_MS,
  );

  it('made no request outside the gateway in all of it', () => {
    expect(requests.filter((request) => request.includes('/graphql')).length).toBeGreaterThan(6);
    expect(outside()).toEqual([]);
  });
});
