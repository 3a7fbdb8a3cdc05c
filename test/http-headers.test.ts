import { describe, expect, it } from 'vitest';
import { appendVary, ifNoneMatchHas } from '../src/http-headers.js';

describe('appendVary', () => {
  it('adds each name once, whatever the case, keeping what is there', () => {
    const headers = new Headers({ vary: 'Accept-Encoding, origin' });
    appendVary(headers, ['Origin', 'Authorization']);
    appendVary(headers, ['Authorization']);
    expect(headers.get('vary')).toBe('Accept-Encoding, origin, Authorization');
    const empty = new Headers();
    appendVary(empty, ['Origin']);
    expect(empty.get('vary')).toBe('Origin');
  });
});

describe('ifNoneMatchHas', () => {
  it('compares weakly, in a list, and takes *', () => {
    expect(ifNoneMatchHas('"a", W/"b"', 'W/"b"')).toBe(true);
    expect(ifNoneMatchHas('W/"a"', '"a"')).toBe(true);
    expect(ifNoneMatchHas('*', '"a"')).toBe(true);
    expect(ifNoneMatchHas('"a"', '"b"')).toBe(false);
    expect(ifNoneMatchHas(null, '"a"')).toBe(false);
  });
});
