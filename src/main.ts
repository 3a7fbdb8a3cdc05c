// `npm start`: the gateway against UPSTREAM_URL, or against the embedded sandbox when none is set,
// with V8's heap setting applied first.
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { ConfigError, loadConfig, type Config } from './config.js';
import { describeAllowedOrigins } from './graphql/cors.js';
import { createGateway } from './gateway.js';
import { startSandbox, type Sandbox } from './sandbox/index.js';

// How eagerly V8 collects the old generation. By default V8 lets it grow to up to four times what was
// live after the last full collection before collecting again, which under load is mostly garbage;
// collecting sooner keeps RSS down at the same throughput (figures in BENCHMARKS.md). Node allows V8
// flags to be set at run time; this one is read at every full collection, so setting it at start-up
// takes effect.
const HEAP_FLAG = '--heap-growing-percent';

/** Sets V8's heap growing percent unless it is 0 (V8's own heuristic) or given on node's command line. */
export function tuneHeap(percent: number, execArgv: readonly string[] = process.execArgv, setFlags = setFlagsFromString): boolean {
  if (percent <= 0 || execArgv.some((arg) => arg === HEAP_FLAG || arg.startsWith(`${HEAP_FLAG}=`))) return false;
  setFlags(`${HEAP_FLAG}=${percent}`);
  return true;
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  tuneHeap(config.heapGrowingPercent);

  let sandbox: Sandbox | null = null;
  if (config.upstream.url === null) {
    sandbox = await startSandbox({ port: 0 });
    config = { ...config, upstream: { ...config.upstream, url: sandbox.url } };
  }
  const demoKey = sandbox?.keys[0];
  const gateway = await createGateway(config, demoKey ? { demoKey } : {});
  const endpoint = `${gateway.url}/graphql`;

  if (sandbox && demoKey) {
    console.log(`Gateway on ${endpoint} (GraphiQL: open it in a browser)`);
    console.log(`Upstream: the bundled sandbox at ${sandbox.url} (demo data; set UPSTREAM_URL for a real install)`);
    console.log(`Demo keys: ${sandbox.keys.join(', ')}`);
    console.log('Try it:');
    console.log(
      `  curl -s ${endpoint} -H 'Authorization: Bearer ${demoKey}' -H 'Content-Type: application/json' \\\n` +
        `    -d '{"query":"{ websites { totalCount nodes { id domain } } }"}'`,
    );
  } else {
    console.log(`Gateway on ${endpoint}, upstream ${config.upstream.url}`);
  }
  console.log(`Browser apps allowed (CORS): ${describeAllowedOrigins(config)}`);

  const stop = async (): Promise<void> => {
    await gateway.close();
    await sandbox?.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

// Run only as the program, so that tests can import tuneHeap.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error('Gateway failed to start:', error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
