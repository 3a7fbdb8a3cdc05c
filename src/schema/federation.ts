// Federation (FEDERATION=on): the schema as a Federation 2 subgraph for a router (Hive Gateway, Apollo
// Router, Cosmo). Website is the entity, by its id; `Query._entities` keeps the rules of `nodes(ids:)`.
// Off, the schema has neither `_entities` nor `_service`.
import { EntityType, ServiceType, entitiesField, serviceField } from '@apollo/subgraph/dist/types.js';
import { MapperKind, mapSchema, printSchemaWithDirectives } from '@graphql-tools/utils';
import {
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLUnionType,
  getNamedType,
  isObjectType,
  type GraphQLFieldConfig,
} from 'graphql';
import { builder } from './builder.js';
import type { GatewayContext } from './context.js';
import { websiteLookingAhead } from './prefetch.js';
import { idProblem, type Problem } from './validate.js';
import { WebsiteRef } from './website.js';

/** 2.6 is what current routers compose. */
export const FEDERATION_SPEC_URL = 'https://specs.apollo.dev/federation/v2.6';

/** As `nodes(ids:)`: each may be an upstream call. */
export const MAX_ENTITY_REPRESENTATIONS = 100;

builder.asEntity(WebsiteRef, {
  key: builder.selection<{ id: string }>('id'),
  resolveReference: ({ id }, ctx, info) => websiteLookingAhead(id, ctx, info),
});

/** Cut short: a representation is the router's and may be anything. */
function described(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** Each a Website's key with an id of the upstream's form; the first bad one is named. */
export function representationsProblems({ representations }: { representations: readonly unknown[] }): Problem[] {
  if (representations.length > MAX_ENTITY_REPRESENTATIONS) {
    return [
      {
        field: ['representations'],
        message: `representations may hold at most ${MAX_ENTITY_REPRESENTATIONS} entities, got ${representations.length}.`,
      },
    ];
  }
  for (const [index, representation] of representations.entries()) {
    const field = ['representations', String(index)];
    const { __typename, id }: { __typename?: unknown; id?: unknown } =
      typeof representation === 'object' && representation !== null ? representation : {};
    if (__typename !== 'Website') {
      return [
        { field, message: `${field.join('.')} must be a Website's key, { __typename: "Website", id }, got ${described(representation)}.` },
      ];
    }
    // An ID is serialized as a string: a number here did not come from a subgraph's `id: ID!`.
    const problem =
      typeof id === 'string'
        ? idProblem([...field, 'id'], id)
        : { field: [...field, 'id'], message: `${field.join('.')}.id must be a positive integer id as a string, got ${described(id)}.` };
    if (problem) return [problem];
  }
  return [];
}

/** An entity that failed, as its Error: both executors answer it as null with that error, at its index. */
const settled = (item: unknown): Promise<unknown> =>
  Promise.resolve(item).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));

const entitiesConfig = (website: GraphQLObjectType): GraphQLFieldConfig<unknown, GatewayContext> => ({
  ...entitiesField,
  // Every entity settled: graphql-jit (0.8.9) puts the null of an item that rejects at the end of the
  // list rather than at its index.
  resolve: async (source, args, context, info) => {
    const items = (await entitiesField.resolve?.(source, args, context, info)) as readonly unknown[];
    return Promise.all(items.map(settled));
  },
  type: new GraphQLNonNull(new GraphQLList(new GraphQLUnionType({ ...EntityType.toConfig(), types: [website] }))),
  description: `The websites of the caller's with these keys, in the same order, at most ${MAX_ENTITY_REPRESENTATIONS}: for a federation router. null, with a NOT_FOUND error, for one the caller has not.`,
  extensions: {
    // One read per representation (the same id twice is read once), and what is under each runs once per entity.
    complexity: ({ representations }: { representations: unknown[] }) => ({
      field: representations.length,
      multiplier: representations.length,
    }),
    argumentProblems: representationsProblems,
  },
});

/** Pothos keeps a type's directives as a list of { name, args }; graphql-tools prints them from { name: [args] }. */
function byName(directives: unknown): unknown {
  if (!Array.isArray(directives)) return directives;
  const grouped: Record<string, unknown[]> = {};
  for (const { name, args } of directives as { name: string; args?: unknown }[]) (grouped[name] ??= []).push(args ?? {});
  return grouped;
}

/**
 * The subgraph, and `sdl`, what the router composes. Not the Pothos plugin's toSubGraphSchema: it replaces
 * Query, which the mutation payloads' `query` fields still name ("multiple types named Query").
 */
export function toSubgraph(schema: GraphQLSchema): { schema: GraphQLSchema; sdl: string } {
  const queryName = schema.getQueryType()?.name;
  const linked = mapSchema(
    new GraphQLSchema({
      ...schema.toConfig(),
      extensions: {
        ...schema.extensions,
        directives: { link: [{ url: FEDERATION_SPEC_URL, import: ['@key', '@inaccessible'] }] },
      },
    }),
    {
      [MapperKind.OBJECT_TYPE]: (type) => {
        const config = type.toConfig();
        return new GraphQLObjectType({ ...config, extensions: { ...config.extensions, directives: byName(config.extensions.directives) } });
      },
      // A payload's `query: Query!` cannot be planned by a router, where Query is every subgraph's.
      [MapperKind.OBJECT_FIELD]: (field) =>
        getNamedType(field.type).name === queryName
          ? { ...field, extensions: { ...field.extensions, directives: { inaccessible: [{}] } } }
          : field,
    },
  );
  const sdl = `${printSchemaWithDirectives(linked)}\n`;
  const website = linked.getType('Website');
  if (!isObjectType(website)) throw new Error('the schema has no Website type');
  const { fields, ...serviceConfig } = ServiceType.toConfig();
  // Its one field reads the SDL made here: no upstream call, no cost.
  const service = new GraphQLObjectType({
    ...serviceConfig,
    fields: Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, { ...field, extensions: { complexity: 0 } }])),
  });
  const subgraph = mapSchema(linked, {
    [MapperKind.QUERY]: (query) => {
      const config = query.toConfig();
      return new GraphQLObjectType({
        ...config,
        fields: {
          ...config.fields,
          _entities: entitiesConfig(website),
          _service: {
            ...serviceField,
            type: new GraphQLNonNull(service),
            description: "This subgraph's schema, for the router's composition.",
            resolve: () => ({ sdl }),
            extensions: { complexity: 0 },
          },
        },
      });
    },
  });
  return { schema: subgraph, sdl };
}
