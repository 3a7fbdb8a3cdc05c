// When `operationName` picks no operation of a document, the answer names its operations and says how to
// pick, instead of yoga's "Could not determine what operation to execute.". Right after parsing.
import { GraphQLError, type DocumentNode } from 'graphql';
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import { documentPlan, operationPlan } from '../../schema/plan.js';
import type { ErrorCode } from '../../errors.js';

const nameOf = (name: string | undefined): string => name ?? '(anonymous)';

function operationChoiceError(document: DocumentNode, operationName: string | null | undefined): GraphQLError {
  const names = documentPlan(document).operations.map((operation) => operation.name);
  const listed = names.map(nameOf);
  const error = (message: string, code: ErrorCode): GraphQLError =>
    new GraphQLError(message, { extensions: { code, operations: listed, http: { status: 400 } } });
  if (names.length === 0) return error('This document holds no operation (a query or a mutation) to run.', 'OPERATION_NOT_FOUND');
  if (operationName === null || operationName === undefined) {
    const example = names.find((name) => name !== undefined);
    return error(
      `This document holds ${names.length} operations (${listed.join(', ')}); send the name of the one to run as "operationName"` +
        (example === undefined ? '.' : ` (for example "operationName": "${example}").`),
      'OPERATION_NAME_REQUIRED',
    );
  }
  const held =
    names.length === 1 && names[0] === undefined
      ? 'its one operation has no name: send no "operationName"'
      : `its operations are ${listed.join(', ')}`;
  return error(`This document holds no operation named "${operationName}"; ${held}.`, 'OPERATION_NOT_FOUND');
}

export function useOperationName(): Plugin<YogaInitialContext> {
  return {
    onParse({ context }) {
      return ({ result }) => {
        // `params` is missing outside HTTP requests.
        if (result instanceof Error || result === null || context.params === undefined) return;
        const { operationName } = context.params;
        if (operationPlan(result, operationName) === null) throw operationChoiceError(result, operationName);
      };
    },
  };
}
