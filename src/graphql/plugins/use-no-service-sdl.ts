// With introspection off, a subgraph's `_service { sdl }` is refused as `__schema` is: it is the whole
// schema. A router composes from the checked-in schema.subgraph.graphql (docs/federation.md).
import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const noServiceSdl: ValidationRule = (context) => ({
  Field(node) {
    if (node.name.value !== '_service' || context.getParentType() !== context.getSchema().getQueryType()) return;
    context.reportError(
      new GraphQLError('GraphQL introspection has been disabled, but the requested query contained the field "_service".', {
        nodes: node,
      }),
    );
  },
});

export function useNoServiceSdl(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(noServiceSdl);
    },
  };
}
