// Which build runs, as an operator asks it: /health and the gateway_build_info metric name
// package.json's version (and Node's), the one `--version` prints (test/package.test.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useStack } from './fixture.js';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

describe('the version', () => {
  const stack = useStack({ env: { METRICS_PORT: '0' } });

  it('is semver, and CHANGELOG.md has an entry for it', () => {
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/);
    expect(readFileSync(new URL('../CHANGELOG.md', import.meta.url), 'utf8')).toMatch(
      new RegExp(`^## ${manifest.version.replaceAll('.', '\\.')} `, 'm'),
    );
  });

  it('is in /health, with the process alive', async () => {
    const response = await fetch(`${stack.gateway.url}/health`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ status: 'alive', version: manifest.version });
  });

  it('is the gateway_build_info metric, with the Node version', async () => {
    const metricsUrl = stack.gateway.metricsUrl;
    if (metricsUrl === null) throw new Error('METRICS_PORT=0 must start the metrics listener');
    const text = await (await fetch(`${metricsUrl}/metrics`)).text();
    expect(text).toContain('# TYPE gateway_build_info gauge');
    expect(text).toContain(`gateway_build_info{version="${manifest.version}",nodejs="${process.versions.node}"} 1\n`);
  });
});
