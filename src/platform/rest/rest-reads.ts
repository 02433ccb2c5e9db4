import { buildOperationNodeForField } from '@graphql-tools/utils';
import { Kind, OperationTypeNode, type DocumentNode, type GraphQLSchema } from 'graphql';
import { createSofa } from 'sofa-api';
import { findAppError } from '../errors';
import { createRequestContext } from '../graphql/context';
import { executeOperation } from '../graphql/execute';
import type { AppServices, RestReader } from '../services';
import type { RestRoute } from './route';
import { REST_DEPTH_LIMIT, restSchemaOf } from './sofa';

/**
 * The REST reads computed in-process (see RestReader). Builds each operation's document exactly as SOFA builds its route (the same schema, models and depth), so the
 * answer has the REST route's fields, no more and no fewer. The schema is built on first use: worker processes,
 * which serve no HTTP, build it only if a job reads.
 */
export function createRestReader(
  servicesOf: () => AppServices,
  buildSchema: () => Promise<GraphQLSchema>,
  routes: readonly RestRoute[],
): RestReader {
  let prepared: Promise<{ schema: GraphQLSchema; documents: Map<string, DocumentNode> }> | undefined;
  const prepare = async () => {
    const schema = restSchemaOf(await buildSchema(), [...routes]);
    const sofa = createSofa({ basePath: '/', schema, depthLimit: REST_DEPTH_LIMIT });
    const documents = new Map<string, DocumentNode>();
    for (const route of routes) {
      const [kind, field] = route.operation.split('.') as ['Query' | 'Mutation', string];
      if (kind !== 'Query') continue;
      // As sofa-api's router builds a query route (router.js, createQueryRoute).
      const operation = buildOperationNodeForField({
        kind: OperationTypeNode.QUERY,
        schema,
        field,
        models: sofa.models,
        ignore: sofa.ignore,
        circularReferenceDepth: sofa.depthLimit,
      });
      documents.set(route.operation, { kind: Kind.DOCUMENT, definitions: [operation] });
    }
    return { schema, documents };
  };
  return {
    async read(operation, variables, actor) {
      const { schema, documents } = await (prepared ??= prepare());
      const document = documents.get(operation);
      if (!document) throw new Error(`${operation} is no documented REST read`);
      const result = await executeOperation({
        schema,
        document,
        variableValues: variables,
        contextValue: createRequestContext(servicesOf(), actor),
      });
      if (result.errors?.length) {
        if (findAppError(result.errors[0])) return null;
        throw result.errors[0];
      }
      return (result.data as Record<string, unknown>)[operation.split('.')[1]!];
    },
  };
}
