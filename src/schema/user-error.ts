// UserError: why a mutation did not happen, or what of it an install ignored. Refusals a form can fix go
// here; everything else (auth, rate limit, outage) stays a GraphQL error.
import type { ErrorCode } from '../errors.js';
import { isInputRefused } from '../upstream/errors.js';
import { builder } from './builder.js';
import type { Problem } from './validate.js';

export interface UserError {
  field: string[] | null;
  message: string;
  code: Extract<ErrorCode, 'BAD_USER_INPUT' | 'NOT_FOUND' | 'UNSUPPORTED'>;
}

export const UserErrorRef = builder.objectRef<UserError>('UserError').implement({
  description: 'Why a mutation did not happen, in terms a form can show next to the right control.',
  fields: (t) => ({
    field: t.exposeStringList('field', {
      nullable: true,
      description: 'Path of the argument or input field at fault, e.g. ["input", "domain"]; null when none applies.',
    }),
    message: t.exposeString('message', { description: 'What is wrong, and what is allowed.' }),
    code: t.exposeString('code', {
      description:
        'BAD_USER_INPUT (a value was refused), NOT_FOUND (no website with that id) or UNSUPPORTED (this install ignored the field; the rest was applied).',
    }),
  }),
});

export const userErrors = (problems: Problem[]): UserError[] =>
  problems.map(({ field, message }) => ({ field, message, code: 'BAD_USER_INPUT' }));

/** Refusals of the caller's input (422, unknown id); others are rethrown. */
export function refusal(error: unknown): UserError[] {
  if (!isInputRefused(error)) throw error;
  if (error.code === 'NOT_FOUND') return [{ field: ['id'], message: error.message, code: 'NOT_FOUND' }];
  const fieldErrors = Object.entries(error.details.fieldErrors ?? {});
  if (fieldErrors.length === 0) return [{ field: null, message: error.message, code: 'BAD_USER_INPUT' }];
  return fieldErrors.flatMap(([field, messages]) =>
    messages.map((message) => ({ field: ['input', field], message, code: 'BAD_USER_INPUT' as const })),
  );
}
