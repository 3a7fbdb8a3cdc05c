// Importing each domain file registers its types and fields on the builder. @defer and @stream are
// part of the schema (graphql-yoga's defer-stream plugin executes them), so schema.graphql declares
// them and code generators accept documents that use them.
import { GraphQLDeferDirective, GraphQLStreamDirective } from '@graphql-tools/utils';
import { specifiedDirectives } from 'graphql';
import { builder } from './builder.js';
import './scalars.js';
import './website.js';
import './stat.js';
import './series.js';
import './website-connection.js';
import './node.js';
import './live.js';

export const schema = builder.toSchema({ directives: [...specifiedDirectives, GraphQLDeferDirective, GraphQLStreamDirective] });
