// WORKERS as configured; the processes themselves are tested in test/main.test.ts (real primary, real workers, real signals).
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { workerCount } from '../../src/http/workers.js';

describe('WORKERS', () => {
  it('is 1 by default, a count, or auto (the available parallelism)', () => {
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({ WORKERS: '3' }).workers).toBe(3);
    expect(loadConfig({ WORKERS: 'AUTO' }).workers).toBe('auto');
    expect(workerCount('auto')).toBe(availableParallelism());
    expect(workerCount(3)).toBe(3);
  });

  it('refuses anything else with a clear message', () => {
    expect(() => loadConfig({ WORKERS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ WORKERS: 'many' })).toThrow('WORKERS must be auto (one per core) or an integer from 1 to 256, got "many"');
    expect(() => loadConfig({ WORKERS: '257' })).toThrow('WORKERS must be auto (one per core) or an integer from 1 to 256, got "257"');
  });
});
