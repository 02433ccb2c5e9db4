import type { CodegenConfig } from '@graphql-codegen/cli';

/** Typed documents for the GraphQL operations the tests send (test/graphql/*.graphql). */
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/graphql/**/*.graphql'],
  generates: {
    'test/__generated__/graphql.ts': {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { DateTimeISO: 'string', Upload: 'unknown', Rupees: 'string | number' },
      },
    },
  },
};

export default config;
