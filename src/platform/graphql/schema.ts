import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { FileResolver } from '../../modules/files/file.resolver';
import { UserResolver } from '../../modules/users/user.resolver';
import { depthLimitRule } from './depth-limit';

export const resolvers = [UserResolver, FileResolver] as const;

let cached: Promise<GraphQLSchema> | undefined;

/** The one schema both faces serve; built once per process. */
export function buildAppSchema(): Promise<GraphQLSchema> {
  cached ??= buildSchema({ resolvers, validate: false, emitSchemaFile: false });
  return cached;
}

export const validationRules = [depthLimitRule(12)];
