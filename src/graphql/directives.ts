// What @skip and @include leave in a selection, for the passes that read a document before it runs
// (the cost count and the look-ahead of statistics).
import {
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  getDirectiveValues,
  type GraphQLResolveInfo,
  type SelectionNode,
} from 'graphql';

export function isIncluded(node: SelectionNode, variables: GraphQLResolveInfo['variableValues']): boolean {
  return (
    getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false
  );
}
