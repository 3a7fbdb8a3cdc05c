// `npm start`: the gateway against UPSTREAM_URL, or against the embedded sandbox when none is set.
import { ConfigError, loadConfig, type Config } from './config.js';
import { tuneHeap } from './heap.js';
import { createGateway } from './server.js';
import { startSandbox, type Sandbox } from './sandbox/index.js';

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

  const stop = async (): Promise<void> => {
    await gateway.close();
    await sandbox?.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
  console.error('Gateway failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
