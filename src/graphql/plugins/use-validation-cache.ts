// Validation once per parsed document. yoga's own cache (parserAndValidationCache's validationCache)
// keys a result by the names of every rule the plugins add, so every plugin's onValidate had to run on
// every request to make the key: the limits' rules (a new rule object each time), @defer/@stream's
// four, the date literals', introspection's, and the key itself, joined from some thirty names. Here a
// result is kept by schema and document (weakly: it goes with the document, which yoga's bounded
// document cache holds), and the plugins' onValidate run only for a document not validated yet; the
// rules they add are needed only then. The rules the gateway's plugins add do not depend on the
// request (introspection is off for every request or for none), so one result per document holds.
import type { DocumentNode, GraphQLError, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';

type Result = readonly GraphQLError[];

export interface ValidationCache {
  /** Answers a document validated before with its result; yoga's validationCache must be off. */
  plugin: Plugin;
  /** `plugin` (and the plugins it adds) with each onValidate run only for a document not validated yet; `plugin` as it is. */
  onlyToValidate<P extends object>(plugin: P): P;
}

export function createValidationCache(): ValidationCache {
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
        if (bySchema === undefined) {
          bySchema = new WeakMap();
          results.set(schema, bySchema);
        }
        // As yoga's own cache keeps it: what the hooks after validation were given.
        bySchema.set(documentAST, validated as Result);
      };
    },
  };
  return { plugin: cachePlugin, onlyToValidate };
}
