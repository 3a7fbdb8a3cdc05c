// Website: its enums, the type (with its statistics), WebsiteList, the queries that read websites,
// the inputs and the mutations that write them.
import type {
  GenericFieldRef,
  InputFieldBuilder,
  InputFieldRef,
  InputShapeFromFields,
  InputTypeParam,
  ObjectFieldBuilder,
  SchemaTypes,
  TypeParam,
} from '@pothos/core';
import type { GraphQLResolveInfo } from 'graphql';
import {
  READ_FIELDS,
  WEBSITE_FIELDS,
  WRITE_FIELDS,
  type InputField,
  type InputUse,
  type ReadField,
  type ReadTypes,
  type Website,
  type WebsiteListQuery,
  type WebsiteWrite,
  type WriteTypes,
} from '../domain.js';
import { GatewayError, isGatewayError } from '../errors.js';
import { NO_UPSTREAM_CALL, ONE_UPSTREAM_CALL, QueryRef, builder } from './builder.js';
import type { GatewayContext } from './context.js';
import { SortDirectionEnum, listType } from './pagination.js';
import { planOf } from './plan.js';
import { lookedAhead, websiteLookingAhead } from './prefetch.js';
import { StatListRef, rowsAhead, statArgs, statArgsProblems, statsQuery, toStatList } from './stat.js';
import { UserErrorRef, refusal, userErrors, type UserError } from './user-error.js';
import {
  assertNoProblems,
  idProblem,
  listArguments,
  listArgumentsProblems,
  normalizeDomain,
  problemsOf,
  websiteWriteProblems,
  type Problem,
} from './validate.js';

export const PrivacyEnum = builder.enumType('Privacy', {
  description: "Who may see a website's statistics page.",
  values: {
    PUBLIC: { value: 'PUBLIC', description: 'Anyone with the link.' },
    PRIVATE: { value: 'PRIVATE', description: 'Only the owner, when signed in.' },
    PASSWORD: { value: 'PASSWORD', description: "Anyone who knows the website's password." },
  } as const,
});

export const WebsiteSortFieldEnum = builder.enumType('WebsiteSortField', {
  description: 'What a list of websites is sorted by.',
  values: {
    CREATED_AT: { value: 'id', description: 'When the website was added.' },
    DOMAIN: { value: 'domain', description: 'The domain name, alphabetically.' },
  } as const,
});

/** As website(id:), for node(id:) and nodes(ids:), but a website not found is null, as Relay expects. */
export async function websiteNode(id: string, ctx: GatewayContext, info: GraphQLResolveInfo): Promise<Website | null> {
  try {
    return await websiteLookingAhead(id, ctx, info);
  } catch (error) {
    if (isGatewayError(error, 'NOT_FOUND')) return null;
    throw error;
  }
}

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T extends SchemaTypes> ? T : never;

/** The GraphQL type of each type of Website field (WEBSITE_FIELDS names one per field). */
const OUTPUT_TYPES = {
  id: 'ID',
  domain: 'String',
  privacy: PrivacyEnum,
  flag: 'Boolean',
  optionalFlag: 'Boolean',
  lines: ['String'],
  timestamp: 'DateTime',
} satisfies { [Type in keyof ReadTypes]: TypeParam<Types> };

/** `t.expose` for a field of the table: TypeScript cannot follow a name through the table to its type. */
type ExposeField = (name: ReadField, options: { type: TypeParam<Types>; nullable: boolean; description: string }) => GenericFieldRef;

function websiteFields(t: ObjectFieldBuilder<Types, Website>) {
  const expose = t.expose.bind(t) as ExposeField;
  return Object.fromEntries(
    READ_FIELDS.map((name) => {
      const { read } = WEBSITE_FIELDS[name];
      return [name, expose(name, { type: OUTPUT_TYPES[read.type], nullable: 'reported' in read, description: read.description })];
    }),
  );
}

export const WebsiteRef = builder.objectRef<Website>('Website').implement({
  description: "A website tracked by the analytics service, owned by the API key's user.",
  interfaces: [builder.nodeInterfaceRef()],
  fields: (t) => ({
    ...websiteFields(t),
    stats: t.field({
      type: StatListRef,
      description: 'A statistic of this website over a date range, grouped by value.',
      args: statArgs,
      complexity: ONE_UPSTREAM_CALL,
      extensions: { argumentProblems: statArgsProblems },
      resolve: async (website, args, ctx, info) => {
        const ahead = lookedAhead(ctx, info, website.id);
        // The look-ahead's page is the loader's (a traced request's read again only to name this field).
        if (ahead) return toStatList(await (ctx.source.traced ? ctx.source.statPage(ahead.query, info) : ahead.page), ahead.query);
        // A website of a list (or node(id:)): its read accepted the key, so its sum's rows start now.
        const query = statsQuery(website.id, args, ctx.clock);
        const page = ctx.source.statPage(query, info);
        const rows = rowsAhead(query, null, ctx, info);
        try {
          return toStatList(await page, query);
        } finally {
          await rows;
        }
      },
    }),
  }),
});

export const WebsiteListRef = listType('WebsiteList', WebsiteRef, 'websites');

/** Query.websites's and Query.websitesConnection's. */
export const websiteListArgs = builder.args((t) => ({
  search: t.string({ description: 'Only websites whose domain contains this text.' }),
  favorite: t.boolean({
    description: 'Only favorites (true) or only non-favorites (false). UNSUPPORTED on an install without favorites.',
  }),
  sortBy: t.field({ type: WebsiteSortFieldEnum, defaultValue: 'id', description: 'What to sort by.' }),
  sort: t.field({ type: SortDirectionEnum, defaultValue: 'desc', description: 'Sort direction.' }),
}));

const websitesArgs = {
  ...websiteListArgs,
  ...builder.args((t) => ({
    perPage: t.int({ defaultValue: 10, description: 'Websites per page: 10, 25, 50 or 100.' }),
    page: t.int({ defaultValue: 1, description: 'Page number, from 1.' }),
  })),
};

export const idArgumentProblems = ({ id }: { id: string }): Problem[] => problemsOf([idProblem(['id'], id)]);

/** An explicit null means "the default". */
export function websiteListQuery(args: InputShapeFromFields<typeof websitesArgs>): WebsiteListQuery {
  // `favorite` is checked by the upstream's answer: only an install without favorites refuses it.
  assertNoProblems(listArgumentsProblems(args));
  const { search, ...rest } = listArguments(args);
  return {
    search,
    favorite: args.favorite ?? undefined,
    sortBy: args.sortBy ?? 'id',
    ...rest,
  };
}

builder.queryField('websites', (t) =>
  t.field({
    type: WebsiteListRef,
    description: "The caller's websites, one page at a time.",
    args: websitesArgs,
    // Fields under the list run once per website: the page size multiplies their cost.
    complexity: (args) => ({ field: 1, multiplier: typeof args.perPage === 'number' && args.perPage > 0 ? args.perPage : 10 }),
    extensions: { argumentProblems: listArgumentsProblems },
    resolve: (_root, args, ctx, info) => ctx.source.websitePage(websiteListQuery(args), info),
  }),
);

builder.queryField('website', (t) =>
  t.field({
    type: WebsiteRef,
    nullable: true,
    description: 'One website by id; null with a NOT_FOUND error when the caller has no such website.',
    args: { id: t.arg.id({ required: true, description: "The website's id." }) },
    complexity: ONE_UPSTREAM_CALL,
    extensions: { argumentProblems: idArgumentProblems },
    resolve: (_root, { id }, ctx, info) => {
      assertNoProblems(idArgumentProblems({ id }));
      return websiteLookingAhead(id, ctx, info);
    },
  }),
);

interface WebsitePayload {
  website: Website | null;
  userErrors: UserError[];
}

interface DeleteWebsitePayload {
  deletedId: string | null;
  userErrors: UserError[];
}

/** What both payloads end with; `query` reads after the write (the website is primed with its new state). */
function payloadFields<Payload extends { userErrors: UserError[] }>(t: ObjectFieldBuilder<Types, Payload>) {
  return {
    userErrors: t.field({
      type: [UserErrorRef],
      description: 'Empty on success.',
      complexity: NO_UPSTREAM_CALL,
      resolve: (payload) => payload.userErrors,
    }),
    query: t.field({
      type: QueryRef,
      description: 'Every query, run after the write: refetch what it changed in the same round trip.',
      complexity: NO_UPSTREAM_CALL,
      resolve: () => ({}),
    }),
  };
}

const WebsitePayloadRef = builder.objectRef<WebsitePayload>('WebsitePayload').implement({
  description: 'The result of creating or updating a website.',
  fields: (t) => ({
    website: t.expose('website', {
      type: WebsiteRef,
      nullable: true,
      description: 'The website as stored, or null when userErrors says why not.',
    }),
    ...payloadFields(t),
  }),
});

const DeleteWebsitePayloadRef = builder.objectRef<DeleteWebsitePayload>('DeleteWebsitePayload').implement({
  description: 'The result of deleting a website.',
  fields: (t) => ({
    deletedId: t.exposeID('deletedId', {
      nullable: true,
      description: 'The id of the deleted website, or null when userErrors says why not.',
    }),
    ...payloadFields(t),
  }),
});

/** The GraphQL input type of each type of Website field. */
const INPUT_TYPES = {
  domain: 'String',
  password: 'String',
  privacy: PrivacyEnum,
  flag: 'Boolean',
  lines: ['String'],
} satisfies { [Type in keyof WriteTypes]: InputTypeParam<Types> };

/** An input field may be null, as GraphQL allows. */
type WriteInput = { [Field in keyof WebsiteWrite]?: WebsiteWrite[Field] | null };
type InputFields<On extends 'create' | 'update'> = { [Field in InputField<On>]: InputFieldRef<Types, WriteInput[Field]> };

/** `t.field` for a field of the table (as `expose` above). */
type InputFieldOf = (options: { type: InputTypeParam<Types>; required: boolean; description: string }) => InputFieldRef<Types, unknown>;

function inputFields<On extends 'create' | 'update'>(t: InputFieldBuilder<Types, 'InputObject'>, on: On): InputFields<On> {
  const field = t.field.bind(t) as InputFieldOf;
  const fields = WRITE_FIELDS.flatMap((name) => {
    const { write } = WEBSITE_FIELDS[name];
    const inputs: Partial<Record<'create' | 'update', InputUse>> = write;
    const use = inputs[on];
    if (use === undefined) return [];
    const description = use.note === undefined ? write.description : `${write.description} ${use.note}`;
    return [[name, field({ type: INPUT_TYPES[write.type], required: use.required === true, description })]];
  });
  return Object.fromEntries(fields) as InputFields<On>;
}

const CreateWebsiteInput = builder.inputType('CreateWebsiteInput', {
  description:
    "A new website. Fields left out take the service's defaults: privacy PUBLIC, emailReports false, excludeBots true, no exclusions.",
  fields: (t) => inputFields(t, 'create'),
});

const UpdateWebsiteInput = builder.inputType('UpdateWebsiteInput', {
  description: 'Changes to a website: only the fields given are changed. The domain cannot be changed.',
  fields: (t) => inputFields(t, 'update'),
});

/** An explicit null is treated like an omitted field: "leave it as it is" (or the default on create). */
function toWrite(input: WriteInput): WebsiteWrite {
  const write: Record<string, unknown> = {};
  for (const name of WRITE_FIELDS) if (input[name] != null) write[name] = input[name];
  return write as WebsiteWrite;
}

function createProblems({ input }: { input: WriteInput }): Problem[] {
  return websiteWriteProblems(toWrite(input), true);
}

function updateProblems({ id, input }: { id: string; input: WriteInput }): Problem[] {
  const write = toWrite(input);
  const problems = [...problemsOf([idProblem(['id'], id)]), ...websiteWriteProblems(write, false)];
  if (Object.keys(write).length === 0) problems.push({ field: ['input'], message: 'input must set at least one field.' });
  return problems;
}

/** Its own arguments, or another write's of the operation, are refused (a form finds its errors in userErrors). */
function refusedWrite(problems: Problem[], ctx: GatewayContext, info: GraphQLResolveInfo): UserError[] | null {
  if (problems.length > 0) return userErrors(problems);
  const other = planOf(ctx)
    ?.selection?.refusals()
    .find((refusal) => refusal.write && !info.fieldNodes.includes(refusal.field));
  if (other === undefined) return null;
  const message = `Not sent: ${other.fieldPath.join('.')} has a refused argument (${other.problem.field.join('.')}), so no write of this operation was sent.`;
  return [{ field: null, message, code: 'BAD_USER_INPUT' }];
}

/** Fields an install accepted with a 2xx but did not apply (`favorite`, without favorites). */
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

async function payloadOf(write: () => Promise<Website>, ignored: (website: Website) => UserError[] = () => []): Promise<WebsitePayload> {
  try {
    const website = await write();
    return { website, userErrors: ignored(website) };
  } catch (error) {
    return { website: null, userErrors: refusal(error) };
  }
}

builder.mutationField('createWebsite', (t) =>
  t.field({
    type: WebsitePayloadRef,
    description: 'Add a website. Sent once: on a timeout the error says the outcome is unknown.',
    args: { input: t.arg({ type: CreateWebsiteInput, required: true, description: 'The new website.' }) },
    complexity: ONE_UPSTREAM_CALL,
    extensions: { argumentProblems: createProblems },
    resolve: async (_root, args, ctx, info) => {
      const refused = refusedWrite(createProblems(args), ctx, info);
      if (refused) return { website: null, userErrors: refused };
      const write = toWrite(args.input);
      write.domain = normalizeDomain(write.domain ?? '') ?? undefined;
      return payloadOf(() => ctx.source.createWebsite(write, info));
    },
  }),
);

builder.mutationField('updateWebsite', (t) =>
  t.field({
    type: WebsitePayloadRef,
    description: "Change a website's settings (HTTP PATCH of the given fields only).",
    args: {
      id: t.arg.id({ required: true, description: "The website's id." }),
      input: t.arg({ type: UpdateWebsiteInput, required: true, description: 'The fields to change.' }),
    },
    complexity: ONE_UPSTREAM_CALL,
    extensions: { argumentProblems: updateProblems },
    resolve: async (_root, args, ctx, info) => {
      const refused = refusedWrite(updateProblems(args), ctx, info);
      if (refused) return { website: null, userErrors: refused };
      const { id } = args;
      const write = toWrite(args.input);
      return payloadOf(
        () => ctx.source.updateWebsite(id, write, info),
        (website) => ignoredFields(write, website),
      );
    },
  }),
);

builder.mutationField('deleteWebsite', (t) =>
  t.field({
    type: DeleteWebsitePayloadRef,
    description: 'Delete a website and all its statistics.',
    args: { id: t.arg.id({ required: true, description: "The website's id." }) },
    complexity: ONE_UPSTREAM_CALL,
    extensions: { argumentProblems: idArgumentProblems },
    resolve: async (_root, args, ctx, info) => {
      const refused = refusedWrite(idArgumentProblems(args), ctx, info);
      if (refused) return { deletedId: null, userErrors: refused };
      const { id } = args;
      try {
        const deletion = await ctx.source.deleteWebsite(id, info);
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
