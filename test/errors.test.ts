// One list of the codes a client can see (ERROR_CODES, src/errors.ts): every code the gateway writes is
// in it (docs/errors.md lists exactly its codes: test/docs.test.ts).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/errors.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The product's sources (the sandbox is a stand-in for the install: its codes are not the gateway's). */
function productSources(): string[] {
  return readdirSync(join(ROOT, 'src'), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !join(entry.parentPath, entry.name).includes('/src/sandbox/'))
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'));
}

describe('ERROR_CODES', () => {
  it('holds every code written as `code: ...` in src/, and says what each means', () => {
    const written = new Set(
      productSources().flatMap((text) => [...text.matchAll(/\bcode: '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1] as string)),
    );
    expect(written.size).toBeGreaterThan(10);
    expect([...written].filter((code) => !(code in ERROR_CODES))).toEqual([]);
    for (const meaning of Object.values(ERROR_CODES)) expect(meaning.length).toBeGreaterThan(10);
  });
});
