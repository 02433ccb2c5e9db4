import { GraphQLError, Kind, type ExecutionArgs, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { filterSchema, pruneSchema } from '@graphql-tools/utils';
import { isGraphQLOnly } from '../graphql/graphql-only';
import { useSofa } from 'sofa-api';
import type { Request, Response as ExpressResponse } from 'express';
import { AppError, findAppError } from '../errors';
import { createRequestContext } from '../graphql/context';
import { requestOrigin } from '../auth/request-origin';
import { executeOperation } from '../graphql/execute';
import { RUPEES_JSON_SCHEMA } from '../graphql/rupees';
import type { Logger } from '../logger';
import type { AppServices } from '../services';
import { errorEnvelope, successEnvelope } from './envelope';
import { plainVariableProblem } from './plain-problems';
import type { RestRoute } from './route';

export const REST_BASE = '/api/v1';
/** How deep SOFA selects fields for a route's answer. */
export const REST_DEPTH_LIMIT = 4;

/**
 * Only the documented operations, no Subscription (SOFA would otherwise expose webhook routes), no field
 * marked GraphQL-only, and no argument below the root: nested arguments (an order's `stamps` page) are for
 * GraphQL clients, and the contract's answers list everything.
 */
export function restSchemaOf(schema: GraphQLSchema, routes: RestRoute[]): GraphQLSchema {
  const operations = new Set(routes.map((route) => route.operation));
  return pruneSchema(
    filterSchema({
      schema,
      rootFieldFilter: (operation, field) => operations.has(`${operation}.${field}` as RestRoute['operation']),
      typeFilter: (name) => name !== schema.getSubscriptionType()?.name,
      objectFieldFilter: (_type, _field, config) => !isGraphQLOnly(config.extensions),
      argumentFilter: (typeName) => typeName === schema.getQueryType()?.name || typeName === schema.getMutationType()?.name,
    }),
  );
}

function rootFieldOf(args: ExecutionArgs): string {
  const operation = args.document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const field = operation?.selectionSet.selections[0];
  return field?.kind === Kind.FIELD ? field.name.value : '';
}

/** Turns the errors of a SOFA execution into the contract's error envelope and HTTP status. */
export function restErrorOf(errors: ReadonlyArray<unknown>, log: Logger): AppError {
  const first = errors[0] as GraphQLError | Error | undefined;
  const appError = findAppError(first);
  if (appError) return appError;
  const message = first?.message ?? '';
  const missing = /Variable "\$(\w+)" of (?:required|non-null) type "[^"]+" (?:was not provided|must not be null)/.exec(message);
  if (missing) return AppError.missingFields([missing[1]]);
  const invalid = plainVariableProblem(message);
  if (invalid) return AppError.badRequest([invalid]);
  const httpStatus = (first as GraphQLError | undefined)?.extensions?.http as { status?: number } | undefined;
  if (httpStatus?.status === 400) return AppError.badRequest([{ field: 'body', problem: message }]);
  log.error({ err: first }, 'unexpected error in a REST operation');
  return new AppError('internal_error');
}

export function createSofaHandler(services: AppServices, schema: GraphQLSchema, routes: RestRoute[]) {
  return useSofa({
    basePath: REST_BASE,
    schema: restSchemaOf(schema, routes),
    depthLimit: REST_DEPTH_LIMIT,
    routes: Object.fromEntries(
      routes.map((route) => [route.operation, { method: route.method, path: route.path, description: route.summary }]),
    ),
    customScalars: {
      Upload: { type: 'string', format: 'binary' },
      DateTimeISO: { type: 'string', format: 'date-time' },
      Rupees: RUPEES_JSON_SCHEMA,
    },
    openAPI: { info: { title: 'Esign API', version: '2.0.0' } },
    swaggerUI: { endpoint: false },
    context: ({ req, res }: { req: Request; res: ExpressResponse }) =>
      createRequestContext(services, res.locals.actor, req.headers, requestOrigin(req)),
    // SOFA answers with `data[field]`; wrapping that value is how its success responses get the envelope.
    execute: (async (args: ExecutionArgs) => {
      const result = await executeOperation(args);
      if (result.errors?.length) return result;
      const field = rootFieldOf(args);
      return { data: { [field]: successEnvelope((result.data as Record<string, unknown>)[field]) } };
    }) as typeof executeOperation,
    errorHandler: (errors) => {
      const error = restErrorOf(errors, services.log);
      // SOFA's router expects its own (fetch-compatible) Response type.
      return new Response(JSON.stringify(errorEnvelope(error)), {
        status: error.status,
        headers: { 'content-type': 'application/json; charset=utf-8' },
      }) as never;
    },
  }) as unknown as SofaHandler;
}

export type SofaHandler = ((req: Request, res: ExpressResponse, next: (error?: unknown) => void) => void) & {
  openAPIDocument: OpenApiDocument;
};

export interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  paths: Record<string, Record<string, any>>;
  components?: { schemas?: Record<string, any>; securitySchemes?: Record<string, unknown> };
  [key: string]: unknown;
}
