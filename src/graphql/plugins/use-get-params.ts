// A GET carries `variables` and `extensions` as JSON in its query string. yoga's parser lets a JSON.parse
// error through, answered 500 as an unexpected error: here it is refused with 400 and a message that
// says which parameter, as yoga refuses a POST body that is not JSON.
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { ErrorCode } from '../../errors.js';

export function useGetParams(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (request.method !== 'GET' || requestParser === undefined) return;
      setRequestParser(async (get) => {
        try {
          return await requestParser(get);
        } catch (error) {
          if (!(error instanceof SyntaxError)) throw error;
          const search = new URL(get.url).searchParams;
          const which = ['variables', 'extensions'].find((name) => {
            try {
              JSON.parse(search.get(name) || 'null');
              return false;
            } catch {
              return true;
            }
          });
          throw createGraphQLError(`The ${which ?? 'variables'} parameter of this GET is not valid JSON.`, {
            extensions: { http: { spec: true, status: 400 }, code: 'BAD_USER_INPUT' satisfies ErrorCode },
          });
        }
      });
    },
  };
}
