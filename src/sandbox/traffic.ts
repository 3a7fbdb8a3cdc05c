// `npm run traffic -- <sandbox URL>`: visits arriving at a demo website, a few every second, until
// Ctrl-C, so that a live view (the dashboard example's, a subscription in GraphiQL) has something to
// show. Each batch is a POST /__sandbox/traffic (docs/sandbox.md); `npm start` prints this command
// with its sandbox's address filled in.
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { seededRandom } from './random.js';

const PAGES = ['/', '/pricing', '/docs', '/blog', '/signup', '/features', '/about'];

export interface TrafficOptions {
  /** The sandbox's base URL, as `npm start` prints it (`Upstream: the bundled sandbox at …`). */
  url: string;
  websiteId: number;
  /** Time between two batches. */
  everyMs: number;
  /** Stops the traffic. */
  signal: AbortSignal;
  /** Told of each batch once the sandbox counted it. */
  onBatch: (batch: { visitors: number; pageviews: number; page: string }) => void;
}

/** Sends batches until `signal` aborts; rejects, saying why, when the sandbox refuses one or cannot be reached. */
export async function sendTraffic({ url, websiteId, everyMs, signal, onBatch }: TrafficOptions): Promise<void> {
  const random = seededRandom(Date.now());
  const endpoint = new URL('/__sandbox/traffic', url);
  while (!signal.aborted) {
    const visitors = 1 + Math.floor(random() * 3);
    const batch = { visitors, pageviews: visitors + Math.floor(random() * 3), page: PAGES[Math.floor(random() * PAGES.length)] ?? '/' };
    let answer: Response;
    try {
      answer = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ websiteId, ...batch }),
        signal,
      });
    } catch (error) {
      if (signal.aborted) return;
      throw new Error(`no sandbox answers at ${endpoint.origin} (is \`npm start\` running?): ${(error as Error).cause ?? error}`);
    }
    if (answer.status !== 204) throw new Error(`the sandbox refused the visits (${answer.status}): ${await answer.text()}`);
    onBatch(batch);
    // An abort ends the wait at once: the loop then stops.
    await delay(everyMs, undefined, { signal }).catch(() => undefined);
  }
}

const USAGE = 'Usage: npm run traffic -- <sandbox URL> [website id]   (npm start prints the command with its URL)';

async function main(args: readonly string[]): Promise<void> {
  const [url, id = '1'] = args;
  const websiteId = Number(id);
  if (url === undefined || !URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol) || !Number.isInteger(websiteId)) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  process.stdout.write(`Visits arriving at website ${websiteId} of ${url}, a batch a second; Ctrl-C stops them.\n`);
  await sendTraffic({
    url,
    websiteId,
    everyMs: 1000,
    signal: stop.signal,
    onBatch: ({ visitors, pageviews, page }) => process.stdout.write(`+${visitors} visitors, ${pageviews} pageviews on ${page}\n`),
  });
}

// Run only as the program (`npm run traffic`), not when a test imports it.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`traffic: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
