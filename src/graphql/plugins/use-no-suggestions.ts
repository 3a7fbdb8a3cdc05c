// Without introspection, an error says no more of the schema than introspection would: graphql's
// "Did you mean …?" (a field, an argument, a type, an enum value) goes from every message. graphql-armor's
// block-field-suggestions does it for validation errors only, and misses enum values ("Did you mean the
// enum value …?") and the variables' coercion errors of execution; this takes them from any answer.
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

const SUGGESTION = / ?Did you mean [^?]*\?/g;

export function useNoSuggestions(): Plugin {
  return {
    onResultProcess({ result }) {
      if (isAsyncIterable(result)) return;
      for (const single of Array.isArray(result) ? result : [result]) {
        for (const error of single.errors ?? []) {
          if (error.message.includes('Did you mean')) (error as { message: string }).message = error.message.replace(SUGGESTION, '');
        }
      }
    },
  };
}
