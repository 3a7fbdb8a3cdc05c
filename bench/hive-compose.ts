// Run by the floor pass (bench/hive-gateway.ts) in a process of its own, once the sandbox listens:
// composes bench/hive-gateway.ts's OpenAPI document, served at HIVE_UPSTREAM_URL's /api/v1, into a
// supergraph for Hive Gateway, written to HIVE_SUPERGRAPH_FILE. GraphQL Mesh's composition: the
// OpenAPI source (@omnigraph/openapi) through @graphql-mesh/compose-cli's programmatic API, which ends
// the process on a source it cannot load; here, that only fails the pass's start.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getComposedSchemaFromConfig } from '@graphql-mesh/compose-cli';
import { loadOpenAPISubgraph } from '@omnigraph/openapi';
import { OPENAPI_DOCUMENT } from './hive-gateway.js';

const upstream = process.env.HIVE_UPSTREAM_URL;
const output = process.env.HIVE_SUPERGRAPH_FILE;
if (!upstream || !output) {
  console.error('hive-compose: HIVE_UPSTREAM_URL and HIVE_SUPERGRAPH_FILE are required');
  process.exit(2);
}

type Logger = Parameters<typeof getComposedSchemaFromConfig>[1];
/** Warnings and errors on stderr (the harness shows them if composing fails); the rest is dropped. */
const logger: Logger = {
  log: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (...args: unknown[]) => console.error(...args),
  error: (...args: unknown[]) => console.error(...args),
  child: () => logger,
} as unknown as Logger;

// The document as a file beside the supergraph (the loader reads a path), kept there for a reader.
const source = join(dirname(output), 'openapi.json');
writeFileSync(source, `${JSON.stringify(OPENAPI_DOCUMENT, null, 2)}\n`);

const supergraph = await getComposedSchemaFromConfig(
  {
    subgraphs: [
      {
        sourceHandler: loadOpenAPISubgraph('Analytics', {
          source,
          endpoint: `${upstream.replace(/\/+$/, '')}/api/v1`,
          operationHeaders: { Authorization: '{context.headers.authorization}' },
        }),
      },
    ],
  },
  logger,
);
writeFileSync(output, supergraph);
