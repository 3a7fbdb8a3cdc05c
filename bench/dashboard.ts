// The dashboard example's figures: its bundle's size, raw and gzipped, and the time to its first chart
// in Debian's chromium: cold visits (a new profile each, nothing cached), each from navigation start to
// the `dashboard:first-chart` mark the page sets when its first chart with data is drawn. serve.mjs
// builds the example and serves it beside a gateway on its sandbox, as `npm run example` does.
//
//   npm run build --silent && npm run build:bench --silent && node dist-bench/bench/dashboard.js [--visits 7]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { launchChromium } from '../test/browser.js';
import { serveExample, stopExample } from '../test/dashboard-example.js';
import { median } from './percentiles.js';
import { PROJECT_ROOT } from './processes.js';

const { values } = parseArgs({ options: { visits: { type: 'string', default: '7' } } });
const visits = Number(values.visits);
const PAGE_TIMEOUT_MS = 60_000;

const served = await serveExample(PROJECT_ROOT);
try {
  const assets = join(PROJECT_ROOT, 'examples', 'dashboard', 'dist', 'assets');
  for (const kind of ['js', 'css']) {
    const files = readdirSync(assets).filter((name) => name.endsWith(`.${kind}`));
    const raw = files.reduce((sum, name) => sum + readFileSync(join(assets, name)).length, 0);
    const gzipped = files.reduce((sum, name) => sum + gzipSync(readFileSync(join(assets, name))).length, 0);
    console.log(`bundle ${kind}: ${(raw / 1000).toFixed(1)} kB, ${(gzipped / 1000).toFixed(1)} kB gzipped`);
  }
  const times: number[] = [];
  for (let i = 0; i < visits; i++) {
    const browser = await launchChromium(PAGE_TIMEOUT_MS, { viewport: { width: 1200, height: 900 } });
    try {
      const page = browser.context.pages()[0] ?? (await browser.context.newPage());
      await page.goto(served.dashboard);
      const mark = await page.waitForFunction(() => performance.getEntriesByName('dashboard:first-chart')[0]?.startTime, null, {
        timeout: PAGE_TIMEOUT_MS,
      });
      times.push(Math.round((await mark.jsonValue()) ?? Number.NaN));
    } finally {
      await browser.close();
    }
  }
  console.log(`first chart, ms after navigation start, ${visits} cold visits: ${times.join(' ')}`);
  console.log(`first chart: median ${median(times)} ms (the first visit's includes the sandbox generating its statistics)`);
} finally {
  await stopExample(served);
}
