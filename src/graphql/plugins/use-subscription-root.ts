// No `@skip` or `@include` in a subscription's top-level selection (the spec's "Single Root Field"): a
// stream whose only field is skipped would never call upstream, so nothing would tell its key is made up.
import { type DocumentNode, type FragmentDefinitionNode, GraphQLError, Kind, OperationTypeNode, type SelectionSetNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ErrorCode } from '../../errors.js';

const CONDITIONS = new Set(['skip', 'include']);

/** Each `@skip` or `@include` in a top-level selection, its fragments' included (each once). */
function conditionsIn(selectionSet: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, seen: Set<string>): GraphQLError[] {
  return selectionSet.selections.flatMap((selection) => {
    const condition = selection.directives?.find((directive) => CONDITIONS.has(directive.name.value));
    const found = condition
      ? [
          new GraphQLError(
            `A subscription selects exactly one top-level field: @${condition.name.value} is not allowed in its top-level selection.`,
            { nodes: condition, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' satisfies ErrorCode } },
          ),
        ]
      : [];
    if (selection.kind === Kind.INLINE_FRAGMENT) return [...found, ...conditionsIn(selection.selectionSet, fragments, seen)];
    const fragment = selection.kind === Kind.FRAGMENT_SPREAD && !seen.has(selection.name.value) && fragments.get(selection.name.value);
    if (!fragment) return found;
    seen.add(fragment.name.value);
    return [...found, ...conditionsIn(fragment.selectionSet, fragments, seen)];
  });
}

export function subscriptionRootProblems(document: DocumentNode): GraphQLError[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  return document.definitions.flatMap((definition) =>
    definition.kind === Kind.OPERATION_DEFINITION && definition.operation === OperationTypeNode.SUBSCRIPTION
      ? conditionsIn(definition.selectionSet, fragments, new Set())
      : [],
  );
}

/** Before graphql-js's own rule, which throws on `@include(if: $required)`. */
export function useSubscriptionRoot(): Plugin {
  return {
    onValidate({ params, setResult }) {
      const problems = subscriptionRootProblems(params.documentAST);
      if (problems.length > 0) setResult(problems);
    },
  };
}
