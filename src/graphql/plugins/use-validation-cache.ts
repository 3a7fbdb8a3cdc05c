// Validation once per parsed document, kept weakly by schema and document. yoga's own cache keys a result
// by every rule the plugins add, so every onValidate ran on every request; the rules do not depend on
// the request, so one result per document holds.
import type { DocumentNode, GraphQLError, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';

type Result = readonly GraphQLError[];

/**
 * `plugin` answers a document validated before (yoga's validationCache must be off); `onlyToValidate`
 * makes each onValidate (its added plugins' too) run only for a document not validated yet.
 */
export function createValidationCache() {
  const results = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Result>>();
  const known = (schema: GraphQLSchema, document: DocumentNode): Result | undefined => results.get(schema)?.get(document);

  const onlyToValidate = <P extends object>(plugin: P): P => {
    if (plugin === cachePlugin) return plugin;
    const { onValidate, onPluginInit } = plugin as Plugin;
    if (onValidate === undefined && onPluginInit === undefined) return plugin;
    const wrapped: Plugin = { ...plugin };
    if (onValidate) {
      wrapped.onValidate = (payload) =>
        payload.params.schema && known(payload.params.schema, payload.params.documentAST) !== undefined ? undefined : onValidate(payload);
    }
    if (onPluginInit) {
      wrapped.onPluginInit = (payload) => onPluginInit({ ...payload, addPlugin: (added) => payload.addPlugin(onlyToValidate(added)) });
    }
    return wrapped as P;
  };

  const cachePlugin: Plugin = {
    onValidate({ params: { schema, documentAST }, setResult }) {
      if (!schema) return undefined;
      const result = known(schema, documentAST);
      if (result !== undefined) {
        setResult(result);
        return undefined;
      }
      return ({ result: validated }) => {
        let bySchema = results.get(schema);
        if (bySchema === undefined) results.set(schema, (bySchema = new WeakMap()));
        bySchema.set(documentAST, validated as Result);
      };
    },
  };
  return { plugin: cachePlugin, onlyToValidate };
}
