import type { Privacy, Website, WebsiteWrite } from '../domain.js';
import { GatewayError, isGatewayError } from '../errors.js';
import { destroyWebsite, patchWebsite, storeWebsite } from '../upstream/api.js';
import { builder } from './builder.js';
import { PrivacyEnum } from './enums.js';
import { idProblem, normalizeDomain, websiteWriteProblems, type Problem } from './validate.js';
import { WebsiteRef } from './website.js';

interface UserError {
  field: string[] | null;
  message: string;
  code: 'BAD_USER_INPUT' | 'NOT_FOUND' | 'UNSUPPORTED';
}

interface WebsitePayload {
  website: Website | null;
  userErrors: UserError[];
}

interface DeleteWebsitePayload {
  deletedId: string | null;
  userErrors: UserError[];
}

const UserErrorRef = builder.objectRef<UserError>('UserError').implement({
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

const WebsitePayloadRef = builder.objectRef<WebsitePayload>('WebsitePayload').implement({
  description: 'The result of creating or updating a website.',
  fields: (t) => ({
    website: t.field({
      type: WebsiteRef,
      nullable: true,
      description: 'The website as stored, or null when userErrors says why not.',
      resolve: (payload) => payload.website,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: 'Empty on success.', resolve: (payload) => payload.userErrors }),
  }),
});

const DeleteWebsitePayloadRef = builder.objectRef<DeleteWebsitePayload>('DeleteWebsitePayload').implement({
  description: 'The result of deleting a website.',
  fields: (t) => ({
    deletedId: t.exposeID('deletedId', { nullable: true, description: 'The id of the deleted website, or null when userErrors says why not.' }),
    userErrors: t.field({ type: [UserErrorRef], description: 'Empty on success.', resolve: (payload) => payload.userErrors }),
  }),
});

const writeFields = {
  privacy: 'Who may see the statistics page.',
  password: 'Password for privacy PASSWORD, 1 to 128 characters.',
  emailReports: 'Send periodic e-mail reports.',
  excludeBots: 'Ignore visits from known bots.',
  excludeParams: 'URL query parameter names to strip from tracked pages; an empty list clears them.',
  excludeIps: 'IP addresses whose visits are not tracked; an empty list clears them.',
} as const;

const CreateWebsiteInput = builder.inputType('CreateWebsiteInput', {
  description: 'A new website. Fields left out take the service\'s defaults: privacy PUBLIC, emailReports false, excludeBots true, no exclusions.',
  fields: (t) => ({
    domain: t.string({ required: true, description: 'Domain name or IPv4 address; a scheme and "www." are stripped.' }),
    privacy: t.field({ type: PrivacyEnum, description: writeFields.privacy }),
    password: t.string({ description: `${writeFields.password} Required with privacy PASSWORD.` }),
    emailReports: t.boolean({ description: writeFields.emailReports }),
    excludeBots: t.boolean({ description: writeFields.excludeBots }),
    excludeParams: t.stringList({ description: writeFields.excludeParams }),
    excludeIps: t.stringList({ description: writeFields.excludeIps }),
  }),
});

const UpdateWebsiteInput = builder.inputType('UpdateWebsiteInput', {
  description: 'Changes to a website: only the fields given are changed. The domain cannot be changed.',
  fields: (t) => ({
    privacy: t.field({ type: PrivacyEnum, description: writeFields.privacy }),
    password: t.string({ description: writeFields.password }),
    emailReports: t.boolean({ description: writeFields.emailReports }),
    excludeBots: t.boolean({ description: writeFields.excludeBots }),
    excludeParams: t.stringList({ description: writeFields.excludeParams }),
    excludeIps: t.stringList({ description: writeFields.excludeIps }),
    favorite: t.boolean({ description: 'Mark or unmark the website as a favorite.' }),
  }),
});

interface WriteInput {
  domain?: string | null;
  privacy?: Privacy | null;
  password?: string | null;
  emailReports?: boolean | null;
  excludeBots?: boolean | null;
  excludeParams?: string[] | null;
  excludeIps?: string[] | null;
  favorite?: boolean | null;
}

/** An explicit null is treated like an omitted field: "leave it as it is" (or the default on create). */
function toWrite(input: WriteInput): WebsiteWrite {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null && value !== undefined));
}

const userErrors = (problems: Problem[]): UserError[] =>
  problems.map(({ field, message }) => ({ field, message, code: 'BAD_USER_INPUT' }));

/**
 * Upstream refusals that belong to the caller's input (422, unknown id) become userErrors; anything
 * else (auth, rate limit, outage) stays a GraphQL error, since no form field can fix it.
 */
function refusal(error: unknown): UserError[] {
  if (isGatewayError(error, 'NOT_FOUND')) return [{ field: ['id'], message: error.message, code: 'NOT_FOUND' }];
  if (isGatewayError(error, 'BAD_USER_INPUT') && error.details.fieldErrors) {
    const fieldErrors = Object.entries(error.details.fieldErrors);
    if (fieldErrors.length === 0) return [{ field: null, message: error.message, code: 'BAD_USER_INPUT' }];
    return fieldErrors.flatMap(([field, messages]) =>
      messages.map((message) => ({ field: ['input', field], message, code: 'BAD_USER_INPUT' as const })),
    );
  }
  throw error;
}

/**
 * Fields an install accepted with a 2xx but did not apply: an install without favorites ignores
 * `favorite`. The caller learns it instead of being told that it worked.
 */
function ignoredFields(write: WebsiteWrite, website: Website): UserError[] {
  if (write.favorite === undefined || website.favorite === write.favorite) return [];
  return [
    {
      field: ['input', 'favorite'],
      message: 'This analytics install does not keep favorites; the other fields were applied.',
      code: 'UNSUPPORTED',
    },
  ];
}

builder.mutationField('createWebsite', (t) =>
  t.field({
    type: WebsitePayloadRef,
    description: 'Add a website. Sent once: on a timeout the error says the outcome is unknown.',
    args: { input: t.arg({ type: CreateWebsiteInput, required: true, description: 'The new website.' }) },
    resolve: async (_root, { input }, ctx) => {
      const write = toWrite(input);
      const problems = websiteWriteProblems(write, true);
      if (problems.length > 0) return { website: null, userErrors: userErrors(problems) };
      write.domain = normalizeDomain(write.domain ?? '') ?? undefined;
      try {
        const website = await storeWebsite(ctx.send, write);
        ctx.loaders.prime(website);
        return { website, userErrors: [] };
      } catch (error) {
        return { website: null, userErrors: refusal(error) };
      }
    },
  }),
);

builder.mutationField('updateWebsite', (t) =>
  t.field({
    type: WebsitePayloadRef,
    description: 'Change a website\'s settings (HTTP PATCH of the given fields only).',
    args: {
      id: t.arg.id({ required: true, description: 'The website\'s id.' }),
      input: t.arg({ type: UpdateWebsiteInput, required: true, description: 'The fields to change.' }),
    },
    resolve: async (_root, { id, input }, ctx) => {
      const write = toWrite(input);
      const problems = [idProblem(['id'], id), ...websiteWriteProblems(write, false)].filter((p): p is Problem => p !== null);
      if (Object.keys(write).length === 0) {
        problems.push({ field: ['input'], message: 'input must set at least one field.' });
      }
      if (problems.length > 0) return { website: null, userErrors: userErrors(problems) };
      try {
        const website = await patchWebsite(ctx.send, id, write);
        ctx.loaders.prime(website);
        return { website, userErrors: ignoredFields(write, website) };
      } catch (error) {
        return { website: null, userErrors: refusal(error) };
      }
    },
  }),
);

builder.mutationField('deleteWebsite', (t) =>
  t.field({
    type: DeleteWebsitePayloadRef,
    description: 'Delete a website and all its statistics.',
    args: { id: t.arg.id({ required: true, description: 'The website\'s id.' }) },
    resolve: async (_root, { id }, ctx) => {
      const problem = idProblem(['id'], id);
      if (problem) return { deletedId: null, userErrors: userErrors([problem]) };
      try {
        const deletion = await destroyWebsite(ctx.send, id);
        ctx.loaders.website.clear(id);
        if (!deletion.deleted) {
          throw new GatewayError('UPSTREAM_ERROR', `The analytics service did not delete website ${id}.`);
        }
        return { deletedId: deletion.id, userErrors: [] };
      } catch (error) {
        return { deletedId: null, userErrors: refusal(error) };
      }
    },
  }),
);
