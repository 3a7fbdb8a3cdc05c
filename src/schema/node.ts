// Query.node and Query.nodes: how Relay refetches a fragment and a normalized cache fills in one object.
// The objects are read here rather than by the relay plugin's node loaders, whose `id` fields resolve
// through a promise: on every website of every list, a promise more and `id` out of selection order.
import { brandWithType, getTypeBrand } from '@pothos/core';
import type { GraphQLResolveInfo } from 'graphql';
import { builder } from './builder.js';
import type { GatewayContext } from './context.js';
import { idProblem, problemsOf, type Problem } from './validate.js';
import { WebsiteRef, websiteNode } from './website.js';

export const MAX_NODE_IDS = 100;

/** Ids are the upstream's own: another type with an identity would get ids of its own form, told apart here. */
export const decodeNodeId = (id: string): { typename: string; id: string } => ({ typename: 'Website', id });

async function nodeOf(globalId: string, ctx: GatewayContext, info: GraphQLResolveInfo): Promise<object | null> {
  const { typename, id } = decodeNodeId(globalId);
  const node = typename === 'Website' ? await websiteNode(id, ctx, info) : null;
  // Node's resolveType reads the brand (the relay plugin's way): the object itself does not say its type.
  if (node !== null && getTypeBrand(node) === null) brandWithType(node, WebsiteRef);
  return node;
}

export const nodeIdProblems = ({ id }: { id: string }): Problem[] => problemsOf([idProblem(['id'], id)]);

/** The first bad one is named. */
export function nodeIdsProblems({ ids }: { ids: readonly string[] }): Problem[] {
  if (ids.length > MAX_NODE_IDS) {
    return [{ field: ['ids'], message: `ids may hold at most ${MAX_NODE_IDS} ids, got ${ids.length}.` }];
  }
  const bad = ids.findIndex((id) => idProblem(['ids'], id) !== null);
  return bad === -1 ? [] : problemsOf([idProblem(['ids', String(bad)], ids[bad] ?? '')]);
}

builder.queryField('node', (t) =>
  t.field({
    type: builder.nodeInterfaceRef(),
    nullable: true,
    description: "An object by its id (a website's id); null, with no error, when the caller has no such object.",
    args: { id: t.arg.id({ required: true, description: "The object's id." }) },
    complexity: { field: 1, multiplier: 1 },
    extensions: { argumentProblems: nodeIdProblems },
    resolve: (_root, { id }, ctx, info) => nodeOf(id, ctx, info),
  }),
);

builder.queryField('nodes', (t) =>
  t.field({
    type: [builder.nodeInterfaceRef()],
    nullable: { list: false, items: true },
    description: `Objects by their ids, in the same order, at most ${MAX_NODE_IDS}; null for an id the caller has no object of.`,
    args: { ids: t.arg.idList({ required: true, description: `The objects' ids, at most ${MAX_NODE_IDS}.` }) },
    complexity: ({ ids }) => ({ field: ids.length, multiplier: ids.length }),
    extensions: { argumentProblems: nodeIdsProblems },
    // Each id on its own: one that fails (a timeout) is an error at its index, not the whole list's.
    resolve: (_root, { ids }, ctx, info) => ids.map((id) => nodeOf(id, ctx, info)),
  }),
);
