// `npm run schema`: writes schema.graphql from the code. A test fails when the two differ.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { printSchema } from 'graphql';
import { schema } from './index.js';

export const printedSchema = (): string => `${printSchema(schema)}\n`;

const target = fileURLToPath(new URL('../../schema.graphql', import.meta.url));
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(target, printedSchema());
  console.log(`wrote ${target}`);
}
