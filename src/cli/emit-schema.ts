/** `npm run schema:emit`: writes schema.graphql from the TypeGraphQL code (a test fails when it drifts). */
import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { printSchema } from 'graphql';
import { composition } from '../modules';
import { buildAppSchema } from '../platform/graphql/schema';

export const SCHEMA_FILE = path.resolve(__dirname, '../../../schema.graphql');

export async function printAppSchema(): Promise<string> {
  const schema = await buildAppSchema(composition.resolvers);
  return `# Generated from the TypeGraphQL code by \`npm run schema:emit\`. Do not edit.\n\n${printSchema(schema)}\n`;
}

if (require.main === module) {
  printAppSchema()
    .then((text) => writeFile(SCHEMA_FILE, text))
    .then(() => console.log(`written: ${SCHEMA_FILE}`))
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}
