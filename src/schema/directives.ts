// What @skip and @include leave in a selection, for the passes that read a document before it runs
// (the cost count and the look-ahead of statistics), and whether a document uses a directive at all.
import {
  BREAK,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  getDirectiveValues,
  visit,
  type DocumentNode,
  type GraphQLResolveInfo,
  type SelectionNode,
} from 'graphql';

export function isIncluded(node: SelectionNode, variables: GraphQLResolveInfo['variableValues']): boolean {
  return (
    getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false
  );
}

/** Whether any of these directives appears anywhere in the document. */
export function usesDirective(document: DocumentNode, names: readonly string[]): boolean {
  let found = false;
  visit(document, {
    Directive(node) {
      if (!names.includes(node.name.value)) return undefined;
      found = true;
      return BREAK;
    },
  });
  return found;
}
