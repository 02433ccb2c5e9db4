import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { depthLimitRule } from './depth-limit';

const built = new WeakMap<readonly Function[], Promise<GraphQLSchema>>();

/**
 * Every subscription brings its own `subscribe` (access check, then the request's EventBus), so the
 * schema-wide PubSub that TypeGraphQL insists on must never be reached.
 */
const unusedPubSub = {
  publish: () => {
    throw new Error('publish through services.events (EventBus), not the schema PubSub');
  },
  subscribe: () => {
    throw new Error('subscriptions must declare their own subscribe');
  },
};

/** The one schema both faces serve, from the composition's resolvers; built once per process. */
export function buildAppSchema(resolvers: readonly Function[]): Promise<GraphQLSchema> {
  let schema = built.get(resolvers);
  if (!schema) {
    schema = buildSchema({
      resolvers: resolvers as [Function, ...Function[]],
      validate: false,
      emitSchemaFile: false,
      pubSub: unusedPubSub,
    });
    built.set(resolvers, schema);
  }
  return schema;
}

export const validationRules = [depthLimitRule(12)];
