// Refuses, before validation, a document that selects too many fields once every fragment spread is
// expanded. A short document can stand for an enormous one: thirty fragments that each spread the next
// one twice are under 2 KB and expand to 2^30 fields. Every pass that expands spreads (graphql-jit's
// compiler, look-aheads, any walk that follows fragments) would pay for all of them, so the expanded
// size is what gets bounded. The count itself visits each fragment once (its count is remembered),
// so it costs no more than reading the document.
import { GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';

export interface FieldLimitOptions {
  /** Most fields a document may select, every fragment spread expanded (MAX_FIELDS; default 1000). */
  limit?: number;
}

export const DEFAULT_FIELD_LIMIT = 1000;

/**
 * Fields the document selects with every fragment spread expanded, over all its operations (each
 * field counted once per place it would appear; @skip/@include ignored: an upper bound). Each
 * fragment is counted once; a spread of a fragment being counted (a cycle, which validation refuses)
 * or of an unknown one counts 0.
 */
export function expandedFieldCount(document: DocumentNode): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const counted = new Map<string, number>();
  const counting = new Set<string>();

  const fragmentCount = (name: string): number => {
    const known = counted.get(name);
    if (known !== undefined) return known;
    const fragment = fragments.get(name);
    if (fragment === undefined || counting.has(name)) return 0;
    counting.add(name);
    const count = selectionCount(fragment.selectionSet);
    counting.delete(name);
    counted.set(name, count);
    return count;
  };

  function selectionCount(selectionSet: SelectionSetNode): number {
    let count = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) count += 1 + (selection.selectionSet ? selectionCount(selection.selectionSet) : 0);
      else if (selection.kind === Kind.INLINE_FRAGMENT) count += selectionCount(selection.selectionSet);
      else count += fragmentCount(selection.name.value);
    }
    return count;
  }

  let total = 0;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) total += selectionCount(definition.selectionSet);
  }
  return total;
}

/** yoga hands repeated requests the same parsed document: counted once. */
const counts = new WeakMap<DocumentNode, number>();

/** expandedFieldCount, once per parsed document (the limit and the compiled-operation budget both ask). */
export function fieldCountOf(document: DocumentNode): number {
  let count = counts.get(document);
  if (count === undefined) counts.set(document, (count = expandedFieldCount(document)));
  return count;
}

export function useFieldLimit({ limit = DEFAULT_FIELD_LIMIT }: FieldLimitOptions = {}): Plugin {
  return {
    onValidate({ params, setResult }) {
      const { documentAST } = params;
      const count = fieldCountOf(documentAST);
      if (count <= limit) return;
      // Past 2^53 the figure is no longer exact: say "more than" instead of a made-up number.
      const found = Number.isSafeInteger(count)
        ? count.toLocaleString('en-US')
        : `more than ${Number.MAX_SAFE_INTEGER.toLocaleString('en-US')}`;
      setResult([
        new GraphQLError(
          `This document selects ${found} fields once its fragments are expanded; the limit is ${limit} (MAX_FIELDS). ` +
            'Spread each fragment where it is needed once, or split the document.',
          { extensions: { code: 'FIELD_LIMIT_EXCEEDED', fieldLimit: limit } },
        ),
      ]);
    },
  };
}
