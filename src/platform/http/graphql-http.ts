import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { GraphQLSchema } from 'graphql';
import { graphqlUploadExpress } from 'graphql-upload-ts';
import { authenticateHeader } from '../auth/authenticate';
import { createRequestContext, type RequestContext } from '../graphql/context';
import { executingGateway } from '../graphql/execute';
import { formatGraphQLError, graphqlHttpErrorHandler } from '../graphql/format-error';
import { GRAPHQL_MAX_REQUEST_BYTES } from '../graphql/limits';
import { operationLimitsPlugin } from '../graphql/operation-limits';
import { validationRules } from '../graphql/schema';
import { ratePolicies, takeRequest } from '../rate-limit/enforce';
import { requestOrigin } from '../auth/request-origin';
import type { AppServices } from '../services';

export interface GraphqlHttpOptions {
  /** The largest file an upload may carry (the files module's limit). */
  maxUploadBytes: number;
}

/**
 * Mounts `/graphql` over HTTP: bearer token and rate limit, multipart uploads, JSON, Apollo. Returns how to stop
 * Apollo, once the server has drained.
 */
export async function mountGraphqlHttp(
  app: express.Express,
  services: AppServices,
  schema: GraphQLSchema,
  { maxUploadBytes }: GraphqlHttpOptions,
): Promise<{ close(): Promise<void> }> {
  const { log, config } = services;
  const policies = ratePolicies(config);
  const apollo = new ApolloServer<RequestContext>({
    gateway: executingGateway(schema),
    validationRules,
    formatError: formatGraphQLError(log),
    // The cache-control plugin wraps every field's resolver to collect cache hints we never give; /graphql
    // answers are always `no-store` (set below).
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      operationLimitsPlugin(config.graphql),
    ],
    // graphql-js stops parsing a document beyond this many tokens (graphql-ws parses with the same bound).
    parseOptions: { maxTokens: config.graphql.maxTokens },
    // Explicit, so that NODE_ENV=production does not turn it off: the endpoint answers only with a token.
    introspection: true,
    // Uploads send multipart: clients add `apollo-require-preflight: true` (see README).
    csrfPrevention: true,
  });
  await apollo.start();
  app.use(
    '/graphql',
    async (req: Request, res: Response, next: NextFunction) => {
      res.setHeader('Cache-Control', 'no-store');
      const actor = await authenticateHeader(services, req.headers.authorization).catch(next);
      if (actor === undefined) return;
      try {
        // Refused credentials count against the client's address, so guessing tokens is throttled too.
        if (!actor) takeRequest(services.rateLimiter, policies.address, req.ip ?? 'unknown', res);
        else takeRequest(services.rateLimiter, policies.token, actor.tokenId, res);
      } catch (error) {
        next(error);
        return;
      }
      if (!actor) {
        if (!res.headersSent) {
          res.status(401).json({ errors: [{ message: 'unauthorized', extensions: { code: 'unauthorized', status: 401 } }] });
        }
        return;
      }
      res.locals.actor = actor;
      next();
    },
    // One byte over the limit reaches the service, which refuses it with file_too_large.
    graphqlUploadExpress({ maxFileSize: maxUploadBytes + 1, maxFiles: 1, maxFieldSize: GRAPHQL_MAX_REQUEST_BYTES }),
    express.json({ limit: GRAPHQL_MAX_REQUEST_BYTES }),
    expressMiddleware(apollo, {
      context: async ({ req, res }) => createRequestContext(services, res.locals.actor, req.headers, requestOrigin(req)),
    }),
    graphqlHttpErrorHandler(log),
  );
  return { close: () => apollo.stop() };
}
