// Importing each domain file registers its types and fields on the builder.
import { builder } from './builder.js';
import './scalars.js';
import './website.js';
import './stats.js';

export const schema = builder.toSchema();
