// What the ending needs to know of yoga's answer, in the request's run; for a query's result without
// errors, the data's JSON, of which the text, the ETag and the stored form are made, once.
import type { Plugin } from 'graphql-yoga';
import { jsonAnswerType } from '../../http-headers.js';
import type { GatewayContext } from '../../schema/context.js';
import type { GatewayServerContext } from '../context.js';
import type { PlanStep } from './use-plan.js';

const MAX_NAME_LENGTH = 100;

export function useAnswerFacts({ plan }: { plan: PlanStep }): Plugin<GatewayContext, GatewayServerContext> {
  // A document with one named operation names it, whether or not the client sent operationName.
  const fromDocument = ({ args }: { args: { contextValue: unknown } }): void => {
    const context = args.contextValue as GatewayContext & GatewayServerContext;
    const operation = plan.of(context)?.operation;
    if (operation === undefined) return;
    const { run } = context;
    run.type = operation.type;
    run.documentName = operation.name?.slice(0, MAX_NAME_LENGTH);
    if (run.operation === null && run.documentName !== undefined) run.operation = run.documentName;
  };
  return {
    onParams({ params, context }) {
      const { run } = context;
      if (typeof params.operationName === 'string') run.operation = params.operationName.slice(0, MAX_NAME_LENGTH);
    },
    onExecute: fromDocument,
    onSubscribe: fromDocument,
    onResultProcess({ request, result, resultProcessor, setResultProcessor, serverContext }) {
      const { run } = serverContext;
      const codes: string[] = [];
      for (const one of Array.isArray(result) ? result : [result]) {
        if ('errors' in one && one.errors) for (const error of one.errors) codes.push(String(error.extensions?.code ?? 'GRAPHQL_ERROR'));
      }
      run.errorCodes = codes;
      if (Array.isArray(result) || Symbol.asyncIterator in result || codes.length > 0 || result.data == null) return;
      if (run.type !== 'query' || resultProcessor === undefined) return;
      const type = jsonAnswerType(request.headers.get('accept') ?? undefined);
      if (type === null) return;
      setResultProcessor((processed, fetchAPI) => {
        const { data, extensions } = processed as { data: unknown; extensions?: unknown };
        run.data = JSON.stringify(data);
        const text = extensions === undefined ? `{"data":${run.data}}` : `{"data":${run.data},"extensions":${JSON.stringify(extensions)}}`;
        return new fetchAPI.Response(text, { status: 200, headers: { 'content-type': `${type}; charset=utf-8` } });
      }, type);
    },
  };
}
