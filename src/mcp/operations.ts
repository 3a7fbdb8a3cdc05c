// The operations MCP tools are made of: named operations in .graphql files, the package's own (copied
// beside this module by the build) and the operator's (MCP_OPERATIONS_DIR). Each file is one trusted
// document, run by its SHA-256 as a persisted query, never sent as text. What cannot run fails at start,
// naming the file.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type GraphQLSchema, Kind, type OperationDefinitionNode, parse, validate } from 'graphql';

export interface NamedOperation {
  name: string;
  operation: OperationDefinitionNode;
  /** The whole document's text: what the hash is of. */
  document: string;
  /** SHA-256 of the document, hex. */
  hash: string;
  file: string;
}

export const BUILT_IN_OPERATIONS = fileURLToPath(new URL('./operations/', import.meta.url));

export function loadOperations(schema: GraphQLSchema, folders: readonly string[]): NamedOperation[] {
  const operations: NamedOperation[] = [];
  const seen = new Map<string, string>();
  for (const folder of folders) {
    let files: string[];
    try {
      files = readdirSync(folder)
        .filter((file) => file.endsWith('.graphql'))
        .sort();
    } catch (error) {
      throw new Error(`MCP operations: cannot read the folder ${folder} (${error instanceof Error ? error.message : String(error)})`);
    }
    for (const file of files) {
      const path = join(folder, file);
      for (const operation of operationsOf(schema, path, readFileSync(path, 'utf8'))) {
        const earlier = seen.get(operation.name);
        if (earlier !== undefined) throw new Error(`MCP operations: ${operation.name} is named in both ${earlier} and ${path}`);
        seen.set(operation.name, path);
        operations.push(operation);
      }
    }
  }
  return operations;
}

export function operationsOf(schema: GraphQLSchema, file: string, document: string): NamedOperation[] {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(document);
  } catch (error) {
    throw new Error(`MCP operations: ${file} does not parse: ${error instanceof Error ? error.message : String(error)}`);
  }
  const errors = validate(schema, parsed);
  if (errors.length > 0) throw new Error(`MCP operations: ${file} is not valid: ${errors.map((e) => e.message).join('; ')}`);
  const hash = createHash('sha256').update(document).digest('hex');
  return parsed.definitions
    .filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)
    .map((operation) => {
      if (operation.name === undefined) throw new Error(`MCP operations: ${file} has an operation without a name`);
      if (operation.operation === 'subscription') throw new Error(`MCP operations: ${file}: ${operation.name.value} is a subscription`);
      return { name: operation.name.value, operation, document, hash, file };
    });
}
