import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { boundedDocumentStore, loadPersistedDocuments, sha256Hex } from '../../../src/graphql/plugins/use-persisted-queries.js';

describe('boundedDocumentStore', () => {
  it('drops the least recently used document past its entry bound', () => {
    const store = boundedDocumentStore(2, 1_000)!;
    store.set('a', '{ a }');
    store.set('b', '{ b }');
    expect(store.get('a')).toBe('{ a }'); // a is now the most recently used
    store.set('c', '{ c }');
    expect(store.get('b')).toBeUndefined();
    expect(store.get('a')).toBe('{ a }');
    expect(store.get('c')).toBe('{ c }');
    expect(store.size).toBe(2);
  });

  it('drops documents past its byte bound, and keeps none larger than the bound', () => {
    const store = boundedDocumentStore(100, 10)!;
    store.set('a', '12345');
    store.set('b', '67890');
    store.set('c', 'xyz');
    expect(store.get('a')).toBeUndefined();
    expect(store.get('b')).toBe('67890');
    store.set('huge', 'x'.repeat(11));
    expect(store.get('huge')).toBeUndefined();
    expect(store.get('c')).toBe('xyz');
  });

  it('counts bytes, not characters, and a document set twice once', () => {
    const store = boundedDocumentStore(100, 8)!;
    store.set('e', 'éé'); // 4 bytes
    store.set('e', 'éé');
    store.set('f', 'ab');
    expect(store.get('e')).toBe('éé');
    store.set('g', 'abc'); // 4 + 2 + 3 = 9 > 8: the least recently used (f) goes
    expect(store.get('f')).toBeUndefined();
  });

  it('keeps nothing when either bound is 0', () => {
    expect(boundedDocumentStore(0, 1_000)).toBeNull();
    expect(boundedDocumentStore(10, 0)).toBeNull();
  });
});

describe('loadPersistedDocuments', () => {
  const write = (content: string): string => {
    const path = join(mkdtempSync(join(tmpdir(), 'manifest-')), 'persisted-documents.json');
    writeFileSync(path, content);
    return path;
  };
  const doc = 'query Q { websites { totalCount } }';

  it("reads client-preset's manifest, with or without the sha256: prefix", () => {
    const manifest = loadPersistedDocuments(write(JSON.stringify({ [`sha256:${sha256Hex(doc)}`]: doc, [sha256Hex('{ a }')]: '{ a }' })));
    expect([...manifest.entries()]).toEqual([
      [sha256Hex(doc), doc],
      [sha256Hex('{ a }'), '{ a }'],
    ]);
  });

  it('refuses an entry whose key is not the hash of its document, and a file that is not such an object', () => {
    expect(() => loadPersistedDocuments(write(JSON.stringify({ 'sha256:0000': doc })))).toThrow(/not the SHA-256 of its document/);
    expect(() => loadPersistedDocuments(write('[]'))).toThrow(/must hold an object/);
    expect(() => loadPersistedDocuments(write('{'))).toThrow(/cannot read .* as JSON/);
    expect(() => loadPersistedDocuments('/nonexistent/manifest.json')).toThrow(/cannot read/);
  });
});
