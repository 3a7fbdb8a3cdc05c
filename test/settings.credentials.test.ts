// No refusal quotes a credential, whatever characters it holds: 24 bad settings (UPSTREAM_URL,
// CORS_ORIGINS, REDIS_URL with Sentinel's forms), each with a user and a password holding one of
// / # ? space @ : % and a comma, given to the built gateway, which refuses to start (exit code 2) naming
// every variable, and prints neither the user nor either half of the password.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { startGatewayProcess } from './gateway-process.js';

const USER = 'Uzr9x';
const LEFT = 'Pw9q';
const RIGHT = 'Zk7v';
/** A password with `between` inside it. */
const password = (between: string): string => `${LEFT}${between}${RIGHT}`;

const UPSTREAM_URLS = [
  ...['/', '#', '?', ' ', '@', ':', '%'].map((char) => `https://${USER}:${password(char)}@analytics.example.com`),
  `https://${USER}:${password('')}@analytics.example.com:99999/`,
];
const CORS_ORIGINS = [
  ...['/', '#', '?', ' ', '@', ':', '%'].map((char) => `https://app.example.com,https://${USER}:${password(char)}@x.example.com`),
  `https://${USER}:${password(',')}@x.example.com`,
];
const REDIS_URLS = [
  `redis://${USER}:${password('/')}@cache:6379`,
  `rediss://${USER}:${password('#')}@cache:6379`,
  `redis://${USER}:${password('?')}@cache:6379`,
  `redis://${USER}:${password(' ')}@cache:6379`,
  `redis://${USER}:${password('@')}@cache:99999`,
  `redis-sentinel://${USER}:${password('/')}@s1:26379,s2:26379/mymaster`,
  `redis-sentinel://s1:26379,s2:26379/mymaster?sentinelUsername=${USER}&sentinelPassword=${password('%')}`,
  `redis-sentinel://${USER}:${password(':')}@s1:26379/?sentinelPassword=${password('')}`,
];

/** Whether `text` holds any part of a credential above. */
const quotesCredential = (text: string): boolean => [USER, LEFT, RIGHT].some((part) => text.includes(part));

describe('a refused setting that carries a credential', () => {
  it('is refused on its own, and its problem quotes no part of the credential (24 shapes)', () => {
    const settings: [string, string][] = [
      ...UPSTREAM_URLS.map((value): [string, string] => ['UPSTREAM_URL', value]),
      ...CORS_ORIGINS.map((value): [string, string] => ['CORS_ORIGINS', value]),
      ...REDIS_URLS.map((value): [string, string] => ['REDIS_URL', value]),
    ];
    expect(settings).toHaveLength(24);
    for (const [variable, value] of settings) {
      let problems: string[] = [];
      try {
        loadConfig({ [variable]: value });
      } catch (error) {
        if (error instanceof ConfigError) problems = error.problems;
        else throw error;
      }
      expect(problems.length, `${variable}=${value} refused`).toBeGreaterThan(0);
      expect(
        problems.every((problem) => problem.startsWith(variable)),
        problems.join('\n'),
      ).toBe(true);
      expect(quotesCredential(problems.join('\n')), problems.join('\n')).toBe(false);
    }
  });

  it('stops the built gateway with exit code 2 naming each variable, and prints no part of the credential', async () => {
    for (let index = 0; index < 8; index++) {
      const run = startGatewayProcess({
        PORT: '0',
        UPSTREAM_URL: UPSTREAM_URLS[index] as string,
        CORS_ORIGINS: CORS_ORIGINS[index] as string,
        REDIS_URL: REDIS_URLS[index] as string,
      });
      expect(await run.exited).toBe(2);
      const output = run.output();
      for (const variable of ['  - UPSTREAM_URL ', '  - CORS_ORIGINS ', '  - REDIS_URL ']) expect(output).toContain(variable);
      expect(quotesCredential(output), output).toBe(false);
    }
  });
});
