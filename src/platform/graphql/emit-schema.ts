/** `npm run schema:emit`: writes schema.graphql from the TypeGraphQL code (a test fails when it drifts). */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { printSchema } from 'graphql';
import { buildAppSchema } from './schema';

export const SCHEMA_FILE = path.resolve(__dirname, '../../../../schema.graphql');

export async function printAppSchema(): Promise<string> {
  return `# Generated from the TypeGraphQL code by \`npm run schema:emit\`. Do not edit.\n\n${printSchema(await buildAppSchema())}\n`;
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
