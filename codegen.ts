import type { CodegenConfig } from '@graphql-codegen/cli';

const scalars = { DateTimeISO: 'string', Upload: 'unknown', Rupees: 'string | number' };

/**
 * Typed documents from schema.graphql: the tests' operations (test/graphql/*.graphql), and the typed client's, one
 * for every root field (client/operations, written by client/scripts/build-operations.mjs).
 */
const config: CodegenConfig = {
  schema: 'schema.graphql',
  generates: {
    'test/__generated__/graphql.ts': {
      documents: ['test/graphql/**/*.graphql'],
      plugins: ['typescript-operations', 'typed-document-node'],
      config: { useTypeImports: true, enumsAsTypes: true, scalars },
    },
    'client/src/__generated__/graphql.ts': {
      documents: ['client/operations/*.graphql'],
      plugins: ['typescript-operations', 'typed-document-node'],
      config: { useTypeImports: true, enumsAsTypes: true, scalars: { ...scalars, Upload: 'Blob' } },
    },
  },
};

export default config;
