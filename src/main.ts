// The gateway against UPSTREAM_URL, or the embedded sandbox when none is set, with V8's heap setting
// applied first. Started by bin.ts, or `node dist/main.js`.
import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit } from './config.js';
import { describeAllowedOrigins } from './graphql/cors.js';
import { createGateway } from './gateway.js';
import { tuneHeap } from './heap.js';
import { serveClusterMetrics } from './http/metrics-listener.js';
import { startTracing } from './tracing.js';
import { probeUpstream } from './http/startup-probe.js';
import { DRAIN_MESSAGE, runPrimary, workerCount } from './http/workers.js';
import { startSandbox } from './sandbox/index.js';
import { VERSION } from './version.js';

export async function main(): Promise<void> {
  let config = loadConfigOrExit();
  tuneHeap(config.heapGrowingPercent);
  // Before anything makes a span.
  const tracing = config.tracing ? await startTracing() : null;

  const workers = workerCount(config.workers);
  if (workers > 1 && cluster.isPrimary) {
    // The primary serves nothing: it forks the workers and drains them on a signal.
    const shared = config.upstream.url === null ? await startSandbox({ port: 0 }) : null;
    if (shared)
      console.log(`Upstream: the bundled sandbox at ${shared.url}, shared by ${workers} workers; demo keys: ${shared.keys.join(', ')}`);
    const metrics = config.metrics ? await serveClusterMetrics(config.metrics) : null;
    runPrimary({
      workers,
      // The primary's sandbox as the workers' upstream (SANDBOX=on would refuse it).
      ...(shared ? { env: { UPSTREAM_URL: shared.url, SANDBOX: '' } } : {}),
      onStopped: async () => {
        await metrics?.close();
        await shared?.close();
      },
    });
    return;
  }
  const sandbox = config.upstream.url === null ? await startSandbox({ port: 0 }) : null;
  if (sandbox) config = { ...config, upstream: { ...config.upstream, url: sandbox.url } };
  const demoKey = sandbox?.keys[0];
  const gateway = await createGateway(config, { demoKey, metricsToPrimary: cluster.isWorker });
  // Before the banner: a signal sent as soon as the address is printed drains rather than kills.
  exitOnSignals(async () => {
    await gateway.drain();
    await sandbox?.close();
    await tracing?.shutdown();
  });
  const endpoint = `${gateway.url}/graphql`;
  const build = `version ${VERSION}, Node.js ${process.versions.node}`;
  const graphiql = config.graphiql ? ' (GraphiQL: open it in a browser)' : '';

  if (sandbox && demoKey) {
    console.log(`Gateway on ${endpoint}${graphiql}, ${build}`);
    console.log(`Upstream: the bundled sandbox at ${sandbox.url} (demo data; set UPSTREAM_URL for a real install)`);
    console.log(`Demo keys: ${sandbox.keys.join(', ')}`);
    console.log('Try it:');
    console.log(
      `  curl -s ${endpoint} -H 'Authorization: Bearer ${demoKey}' -H 'Content-Type: application/json' \\\n` +
        `    -d '{"query":"{ websites { totalCount nodes { id domain } } }"}'`,
    );
    // A clone has the npm scripts; the package has the built script alone.
    const clone = existsSync(fileURLToPath(new URL('../src/main.ts', import.meta.url)));
    const traffic = clone ? 'npm run traffic --' : `node ${fileURLToPath(new URL('./sandbox/traffic.js', import.meta.url))}`;
    console.log('Next:');
    if (config.graphiql)
      console.log('  in GraphiQL, run the query, then open the Upstream calls panel (its left bar): the REST calls it made');
    console.log(`  ${traffic} ${sandbox.url}   visits arriving every second, so that live views move`);
    if (clone) console.log('  npm run example   (in place of npm start) this gateway with the dashboard example beside it');
  } else {
    console.log(`Gateway on ${endpoint}${graphiql}, upstream ${config.upstream.url}, ${build}`);
    const upstreamUrl = config.upstream.url;
    if (upstreamUrl !== null) {
      void probeUpstream(upstreamUrl).then((problem) => {
        if (problem) console.warn(`Warning: UPSTREAM_URL ${upstreamUrl} does not answer like the analytics API: ${problem}`);
      });
    }
  }
  console.log(`Browser apps allowed (CORS): ${describeAllowedOrigins(config)}`);
  if (gateway.mcp) console.log(`MCP tools for AI assistants: ${gateway.url}/mcp (docs/mcp.md)`);
}

/** A second SIGTERM or SIGINT exits at once (1); a primary's word drains a worker, never as a second signal. */
function exitOnSignals(drain: () => Promise<void>): void {
  let draining = false;
  const start = (reason: string): void => {
    if (draining) return;
    draining = true;
    console.log(`${reason}: draining (/ready answers 503; requests in flight finish)`);
    drain().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('Drain failed:', error instanceof Error ? error.message : error);
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (draining) {
      console.error(`${signal} again: exiting without waiting for the requests in flight`);
      process.exit(1);
    }
    start(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  if (cluster.isWorker) process.on('message', (message) => message === DRAIN_MESSAGE && start(`Worker ${process.pid} told to stop`));
}

// Run only as the program (`node dist/main.js`), not when bin.ts imports it.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error('Gateway failed to start:', error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
