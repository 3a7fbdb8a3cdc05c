// `analytics-graphql-gateway mcp`: MCP on stdin and stdout, for a desktop client that starts the gateway as
// its child. The gateway runs as `npm start` runs it, on a free port of 127.0.0.1 only (its tool calls are
// requests to itself); the key is ANALYTICS_API_KEY (the sandbox's first demo key with the sandbox).
// stdout carries MCP messages only: the log and every notice go to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { readAuthorization } from './api-key.js';
import { loadConfigOrExit } from './config.js';
import { createGateway } from './gateway.js';
import { stdoutLogger } from './log.js';
import { startSandbox, type Sandbox } from './sandbox/index.js';
import { createMcpServer } from './mcp/server.js';

const STDERR = 2;

export async function runStdio(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // The desktop client's child, not a service: one process, on loopback, no metrics listener.
  let config = loadConfigOrExit({ ...env, HOST: '127.0.0.1', PORT: '0', WORKERS: '1', METRICS_PORT: '' });
  if (!config.mcp.enabled) {
    console.error('MCP=off: the MCP server is turned off');
    process.exit(2);
  }
  let sandbox: Sandbox | null = null;
  if (config.upstream.url === null) {
    sandbox = await startSandbox({ port: 0 });
    config = { ...config, upstream: { ...config.upstream, url: sandbox.url } };
  }
  const { logger, stopLog } = stdoutLogger(config.logLevel, STDERR);
  const gateway = await createGateway(config, { logger });
  const mcp = gateway.mcp;
  if (mcp === null) throw new Error('the gateway was built without MCP');
  const given = config.mcp.apiKey ?? sandbox?.keys[0];
  const reading = given === undefined ? null : readAuthorization(`Bearer ${given}`);
  const authorization = reading !== null && 'authorization' in reading ? reading.authorization : null;
  if (authorization === null) console.error('ANALYTICS_API_KEY is not set: every tool call will say so');
  else if (config.mcp.apiKey === null) console.error('ANALYTICS_API_KEY is not set: using the sandbox demo key');
  const server = createMcpServer(mcp, authorization);
  const stop = async (): Promise<void> => {
    await gateway.close();
    await sandbox?.close();
    stopLog();
    process.exit(0);
  };
  process.stdin.once('end', () => void stop());
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  await server.connect(new StdioServerTransport());
  console.error(
    `MCP on stdio: ${mcp.tools.length} tools, upstream ${sandbox ? `the bundled sandbox at ${sandbox.url}` : config.upstream.url}`,
  );
}
