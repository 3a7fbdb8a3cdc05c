// yoga answers a GET whose `variables` or `extensions` is not JSON with a 500; here it is a 400 that
// names the parameter.
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
