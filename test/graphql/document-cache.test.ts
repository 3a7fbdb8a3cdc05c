// yoga's parse cache bounded by what documents cost: many distinct documents never hold more than
// the bound, a document larger than the bound is not kept, and comments (which graphql keeps as
// tokens) are counted.
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createDocumentCaches, documentBytes } from '../../src/graphql/document-cache.js';
import { dataOf, useStack } from '../fixture.js';

const padded = (i: number, comments: number) => `query Q${i} { website(id: "${i}") { id domain } }\n${'#\n'.repeat(comments)}`;

describe('documentBytes', () => {
  it('counts every token, comments included, and the source twice', () => {
    const plain = '{ website(id: "1") { id } }';
    const base = documentBytes(plain, parse(plain));
    expect(base).toBeGreaterThan(2 * plain.length);
    const commented = `${plain}\n${'#\n'.repeat(1000)}`;
    // a thousand comments and their 2,000 characters
    expect(documentBytes(commented, parse(commented)) - base).toBeGreaterThanOrEqual(1000 * 100 + 2 * 2000);
  });
});

describe('createDocumentCaches', () => {
  it('keeps no more than its bound in bytes, whatever the number of documents, most recent kept', () => {
    const maxBytes = 256 * 1024;
    const { documentCache } = createDocumentCaches(maxBytes);
    const sources = Array.from({ length: 1500 }, (_, i) => padded(i, 500));
    for (const source of sources) documentCache.set(source, parse(source));
    expect(documentCache.calculatedSize).toBeLessThanOrEqual(maxBytes);
    expect(documentCache.size).toBeGreaterThan(0);
    expect(documentCache.size).toBeLessThan(1500);
    expect(documentCache.get(sources[1499]!)).toBeDefined();
    expect(documentCache.get(sources[0]!)).toBeUndefined();
  });

  it('does not keep a document larger than the whole bound, nor errors past a quarter of it', () => {
    const { documentCache, errorCache } = createDocumentCaches(64 * 1024);
    const large = padded(1, 5000);
    documentCache.set(large, parse(large));
    expect(documentCache.size).toBe(0);
    for (let i = 0; i < 100; i++) errorCache.set(`{ broken ${i} ${'x '.repeat(500)}`, new Error('Syntax Error'));
    expect(errorCache.calculatedSize).toBeLessThanOrEqual(16 * 1024);
  });
});

describe('DOCUMENT_CACHE_MAX_BYTES and COMPILED_CACHE_MAX_BYTES over HTTP', () => {
  // Both caches too small for any document: every request parses, validates and runs on the standard executor.
  const tiny = useStack({ env: { DOCUMENT_CACHE_MAX_BYTES: '0', COMPILED_CACHE_MAX_BYTES: '0', GRAPHQL_JIT_ON_RUN: '1' } });
  it('answers the same on every run when nothing can be kept', async () => {
    const query = '{ website(id: "1") { id domain pages: stats(name: PAGE, period: LAST_7_DAYS) { totalCount } } }';
    const answers = [];
    for (let run = 0; run < 3; run++) answers.push(dataOf(await tiny.gql(query)));
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });
});
