// GraphQL Code Generator's client-preset: types for every operation in src/, from the gateway's
// schema.graphql (the one checked in at the repository's root), and the trusted-documents manifest
// (src/gql/persisted-documents.json) that the gateway loads with PERSISTED_DOCUMENTS.
import type { CodegenConfig } from '@graphql-codegen/cli';
import { addTypenameSelectionDocumentTransform } from '@graphql-codegen/client-preset';

const config: CodegenConfig = {
  schema: '../../schema.graphql',
  documents: ['src/**/*.{ts,tsx}', '!src/gql/**'],
  ignoreNoDocuments: false,
  silent: true,
  generates: {
    './src/gql/': {
      preset: 'client',
      // The manifest's documents are the ones the gateway runs: with __typename, as urql's cache reads it.
      presetConfig: { persistedDocuments: true, fragmentMasking: false },
      documentTransforms: [addTypenameSelectionDocumentTransform],
      config: {
        scalars: { Date: 'string', DateTime: 'string' },
        useTypeImports: true,
      },
    },
  },
};

export default config;
