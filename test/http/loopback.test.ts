// Where the gateway's tool calls reach it: its own address, a wildcard one on loopback.
import { describe, expect, it } from 'vitest';
import { reachedAt } from '../../src/http/loopback.js';

describe('the loopback', () => {
  it('reaches a gateway listening on every interface through loopback, any other where it listens', () => {
    expect(reachedAt('http://0.0.0.0:4000')).toBe('http://127.0.0.1:4000');
    expect(reachedAt('http://[::]:4000')).toBe('http://[::1]:4000');
    expect(reachedAt('http://127.0.0.1:39999')).toBe('http://127.0.0.1:39999');
    expect(reachedAt('http://[::1]:4000')).toBe('http://[::1]:4000');
    expect(reachedAt('http://10.1.2.3:4000')).toBe('http://10.1.2.3:4000');
  });
});
