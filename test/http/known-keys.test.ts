// The known keys: for KEY_RECHECK_S after the last answer that accepted them, at most MAX_KNOWN_KEYS.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_KNOWN_KEYS, createKnownKeys } from '../../src/http/known-keys.js';

beforeEach(() => vi.useFakeTimers({ toFake: ['performance'] }));
afterEach(() => vi.useRealTimers());

describe('known keys', () => {
  it('knows a key for its time after the last answer that accepted it', () => {
    const keys = createKnownKeys(10_000);
    expect(keys.knows('Bearer a')).toBe(false);
    keys.remember('Bearer a');
    vi.advanceTimersByTime(9_000);
    expect(keys.knows('Bearer a')).toBe(true);
    keys.remember('Bearer a');
    vi.advanceTimersByTime(9_000);
    expect(keys.knows('Bearer a')).toBe(true);
    vi.advanceTimersByTime(1_001);
    expect(keys.knows('Bearer a')).toBe(false);
  });

  it('when full, lets go of the key least lately remembered', () => {
    const keys = createKnownKeys(10_000);
    for (let i = 0; i < MAX_KNOWN_KEYS; i++) keys.remember(`Bearer k${i}`);
    vi.advanceTimersByTime(6_000);
    keys.remember('Bearer k0'); // past half its time: it goes to the back
    keys.remember('Bearer new');
    expect(keys.knows('Bearer k0')).toBe(true);
    expect(keys.knows('Bearer k1')).toBe(false);
    expect(keys.knows('Bearer new')).toBe(true);
    expect(keys.knows(`Bearer k${MAX_KNOWN_KEYS - 1}`)).toBe(true);
  });
});
