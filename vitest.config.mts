import { defineConfig } from 'vitest/config';

export default defineConfig({
  // One copy of graphql for the schema and the tests ("Cannot use GraphQLObjectType from another realm").
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Each test file gets its own database and app; two at a time fits a 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
