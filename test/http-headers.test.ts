import { describe, expect, it } from 'vitest';
import { ifNoneMatchHas } from '../src/http-headers.js';

describe('ifNoneMatchHas', () => {
  it('compares weakly, in a list, and takes *', () => {
    expect(ifNoneMatchHas('"a", W/"b"', 'W/"b"')).toBe(true);
    expect(ifNoneMatchHas('W/"a"', '"a"')).toBe(true);
    expect(ifNoneMatchHas('*', '"a"')).toBe(true);
    expect(ifNoneMatchHas('"a"', '"b"')).toBe(false);
    expect(ifNoneMatchHas(null, '"a"')).toBe(false);
  });
});
