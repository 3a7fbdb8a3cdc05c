// `npm run sandbox`: the sandbox on a port, configured from the environment.
import { tenantKey } from './demo-data.js';
import { ConfigError, optionsFromEnv } from './env-options.js';
import { startSandbox } from './server.js';
import type { SandboxOptions } from './types.js';

async function main(): Promise<void> {
  let options: SandboxOptions;
  try {
    options = optionsFromEnv(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`sandbox: ${error.message}\n`);
    process.exit(2);
  }
  const sandbox = await startSandbox(options);
  process.stdout.write(
    [
      `Sandbox analytics API listening on ${sandbox.url}`,
      `  API base:  ${sandbox.url}/api/v1 (dialect: ${sandbox.dialect})`,
      `  Demo keys: ${sandbox.keys.map((key, i) => `${key} (user ${i + 1})`).join(', ')}`,
      ...(options.tenantKeys ? [`  Tenants:   ${tenantKey(1)} to ${tenantKey(options.tenantKeys)} (user 1)`] : []),
      `  Control:   ${sandbox.url}/__sandbox/log, /__sandbox/knobs, /__sandbox/faults, /__sandbox/health`,
      `  Try:       curl -H 'Authorization: Bearer ${sandbox.keys[0] ?? ''}' ${sandbox.url}/api/v1/websites`,
      '',
    ].join('\n'),
  );
  const stop = (): void => {
    void sandbox.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`sandbox: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
