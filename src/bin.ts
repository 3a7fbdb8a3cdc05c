#!/usr/bin/env node
// The command (`analytics-graphql-gateway`, `npm start`, the image). It checks the Node version before
// anything is imported (an older Node fails deep inside a dependency): keep this file free of static
// imports and of syntax an old Node (14 on) cannot parse, so that the refusal is what an old Node prints.

/** package.json's engines.node (test/package.test.ts checks the refusal names it). */
const NODE_FLOOR = '22.19.0';

function olderThan(version: string, floor: string): boolean {
  const have = version.split('.').map(Number);
  const need = floor.split('.').map(Number);
  for (let i = 0; i < need.length; i++) {
    if ((have[i] || 0) !== need[i]) return (have[i] || 0) < (need[i] || 0);
  }
  return false;
}

const HELP = `Usage: analytics-graphql-gateway [mcp | --version | --help]

Serves a GraphQL API over the REST API of a phpAnalytics install, at http://HOST:PORT/graphql.
With no UPSTREAM_URL it embeds the bundled sandbox (demo data) and prints a demo key; in production
(NODE_ENV=production) it refuses to start without UPSTREAM_URL, unless SANDBOX=on.
Every setting is an environment variable, for example:

  UPSTREAM_URL=https://analytics.example.com  the install (with or without /api/v1)
  HOST=127.0.0.1 PORT=4000                    where to listen
  NODE_ENV=production                         production defaults (no GraphiQL, no introspection)
  REDIS_URL=redis://redis:6379                a cache shared by several gateways
  METRICS_PORT=9464                           Prometheus metrics on their own port

All of them: docs/configuration.md (in the package, and in the repository).

Commands:
  mcp        speak MCP on stdin and stdout (desktop clients): the gateway's tools with the key in
             ANALYTICS_API_KEY; logs go to stderr (docs/mcp.md)

Options:
  --version  print the version and exit
  --help     print this help and exit
`;

async function run(): Promise<void> {
  if (olderThan(process.versions.node, NODE_FLOOR)) {
    console.error(
      `analytics-graphql-gateway needs Node.js ${NODE_FLOOR} or newer (24 recommended); this is Node.js ${process.versions.node}.`,
    );
    process.exit(1);
  }
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  if (args.includes('--version') || args.includes('-v')) {
    const { VERSION } = await import('./version.js');
    console.log(VERSION);
    return;
  }
  if (args[0] === 'mcp' && args.length === 1) {
    const { runStdio } = await import('./mcp-stdio.js');
    await runStdio();
    return;
  }
  if (args.length > 0) {
    console.error(`analytics-graphql-gateway: unknown argument ${args[0]} (settings are environment variables; see --help)`);
    process.exit(2);
  }
  const { main } = await import('./main.js');
  await main();
}

run().catch((error: unknown) => {
  console.error('Gateway failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
