// Without introspection, "Did you mean …?" goes from every message of any answer. graphql-armor's
// block-field-suggestions misses enum values and the variables' coercion errors.
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
