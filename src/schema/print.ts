// `npm run schema`: writes schema.graphql and schema.subgraph.graphql from the code (a test compares them).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { printSchema } from 'graphql';
import { schema, subgraphSchema } from './index.js';

export const printedSchema = (): string => `${printSchema(schema)}\n`;
export const printedSubgraphSchema = (): string => subgraphSchema().sdl;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [file, printed] of [
    ['schema.graphql', printedSchema],
    ['schema.subgraph.graphql', printedSubgraphSchema],
  ] as const) {
    const target = fileURLToPath(new URL(`../../${file}`, import.meta.url));
    writeFileSync(target, printed());
    console.log(`wrote ${target}`);
  }
}
