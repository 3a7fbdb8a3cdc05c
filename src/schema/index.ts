// Importing each domain file registers its types on the builder. @defer and @stream are declared, so
// that code generators accept documents that use them (yoga's defer-stream plugin runs them).
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
/** FEDERATION=on's, made at its first use. */
export const subgraphSchema = (): ReturnType<typeof toSubgraph> => (subgraph ??= toSubgraph(schema));
