// Importing each domain file registers its types and fields on the builder. @defer and @stream are
// part of the schema (graphql-yoga's defer-stream plugin executes them), so schema.graphql declares
// them and code generators accept documents that use them.
import { GraphQLDeferDirective, GraphQLStreamDirective } from '@graphql-tools/utils';
import { specifiedDirectives } from 'graphql';
import { builder } from './builder.js';
import { toSubgraph } from './federation.js';
import './scalars.js';
import './website.js';
import './stat.js';
import './series.js';
import './website-connection.js';
import './node.js';
import './live.js';

export const schema = builder.toSchema({ directives: [...specifiedDirectives, GraphQLDeferDirective, GraphQLStreamDirective] });

let subgraph: ReturnType<typeof toSubgraph> | undefined;
/** The schema as a federation subgraph, with its SDL (FEDERATION=on; schema/federation.ts), made at its first use. */
export const subgraphSchema = (): ReturnType<typeof toSubgraph> => (subgraph ??= toSubgraph(schema));
